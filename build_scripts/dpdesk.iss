; Inno Setup 6 script for dpdesk (Windows x64). build_scripts\build_windows.ps1 runs it as
;   ISCC.exe /DAppVersion=0.1.0 /DSourceDir=<repo>\dist\dpdesk /DOutputDir=<repo>\dist /DRepoRoot=<repo> dpdesk.iss
;
; Installs the PyInstaller folder (dpdesk.exe: the desktop app; dpdesk-cli.exe: the command line) with a
; Start-menu entry and an uninstaller, per user by default (no administrator rights needed; an
; administrator can choose "for all users").
;
; File types: plans are ordinary .json files and tables are .csv/.xlsx/.parquet, which other programs own.
; The installer therefore does NOT take over those extensions (that would make every JSON file and every
; spreadsheet open in dpdesk, and Windows 10/11 ignore an installer's attempt to change the default anyway).
; With the "Open with" task (on by default) it registers dpdesk as a handler that Explorer offers under
; "Open with" for .json, .csv, .xlsx and .parquet, and in "Choose another app" with "Always" for a user
; who wants dpdesk as the default. A dedicated plan extension would need the app to recognise it (the app
; opens a file as a plan when its name ends in .json) - see build_scripts\README.md.
;
; Uninstalling removes the program only: ledgers and settings in %LOCALAPPDATA%\dpdesk are the
; record of the privacy budget already spent and are kept.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef RepoRoot
  #define RepoRoot ".."
#endif
#ifndef SourceDir
  #define SourceDir RepoRoot + "\dist\dpdesk"
#endif
#ifndef OutputDir
  #define OutputDir RepoRoot + "\dist"
#endif

[Setup]
; AppId identifies the product across versions (upgrades, uninstall entry): never change it.
AppId={{F2372665-7A29-4A7C-902F-BB1854BE1941}
AppName=dpdesk
AppVersion={#AppVersion}
AppVerName=dpdesk {#AppVersion}
AppPublisher=dpdesk
AppComments=Publish statistics from a sensitive table under differential privacy
DefaultDirName={autopf}\dpdesk
DefaultGroupName=dpdesk
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog commandline
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#OutputDir}
OutputBaseFilename=dpdesk-{#AppVersion}-windows-x64-setup
SetupIconFile={#RepoRoot}\resources\icons\dpdesk.ico
UninstallDisplayIcon={app}\dpdesk.exe
UninstallDisplayName=dpdesk {#AppVersion}
Compression=lzma2/max
SolidCompression=yes
LZMANumBlockThreads=2
WizardStyle=modern
ChangesAssociations=yes
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
; Inno Setup ships no official Simplified Chinese messages file; add an unofficial one here if wanted.

[Tasks]
Name: "openwith"; Description: "Offer dpdesk under ""Open with"" for plans (.json) and tables (.csv, .xlsx, .parquet)"; GroupDescription: "File types:"
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; an upgrade replaces the whole bundle: no library of an older version may linger next to the new ones
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\dpdesk"; Filename: "{app}\dpdesk.exe"; Comment: "Differential privacy releases"
Name: "{autodesktop}\dpdesk"; Filename: "{app}\dpdesk.exe"; Tasks: desktopicon

[Registry]
; HKA = HKCU for a per-user install, HKLM for an all-users install.
; ProgIDs: what "Open with dpdesk" runs, with dpdesk's icon.
Root: HKA; Subkey: "Software\Classes\dpdesk.plan"; ValueType: string; ValueName: ""; ValueData: "dpdesk plan"; Flags: uninsdeletekey; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\dpdesk.plan\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\dpdesk.exe,0"; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\dpdesk.plan\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\dpdesk.exe"" open ""%1"""; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\dpdesk.table"; ValueType: string; ValueName: ""; ValueData: "Table (open in dpdesk)"; Flags: uninsdeletekey; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\dpdesk.table\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\dpdesk.exe,0"; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\dpdesk.table\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\dpdesk.exe"" open ""%1"""; Tasks: openwith
; "Open with" lists of the extensions (values only: the extensions' default programs are not touched)
Root: HKA; Subkey: "Software\Classes\.json\OpenWithProgids"; ValueType: string; ValueName: "dpdesk.plan"; ValueData: ""; Flags: uninsdeletevalue; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\.csv\OpenWithProgids"; ValueType: string; ValueName: "dpdesk.table"; ValueData: ""; Flags: uninsdeletevalue; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\.xlsx\OpenWithProgids"; ValueType: string; ValueName: "dpdesk.table"; ValueData: ""; Flags: uninsdeletevalue; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\.parquet\OpenWithProgids"; ValueType: string; ValueName: "dpdesk.table"; ValueData: ""; Flags: uninsdeletevalue; Tasks: openwith
; the application itself, for "Choose another app"
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe"; ValueType: string; ValueName: "FriendlyAppName"; ValueData: "dpdesk"; Flags: uninsdeletekey; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\dpdesk.exe"" open ""%1"""; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe\SupportedTypes"; ValueType: string; ValueName: ".json"; ValueData: ""; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe\SupportedTypes"; ValueType: string; ValueName: ".csv"; ValueData: ""; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe\SupportedTypes"; ValueType: string; ValueName: ".xlsx"; ValueData: ""; Tasks: openwith
Root: HKA; Subkey: "Software\Classes\Applications\dpdesk.exe\SupportedTypes"; ValueType: string; ValueName: ".parquet"; ValueData: ""; Tasks: openwith

[Run]
Filename: "{app}\dpdesk.exe"; Description: "{cm:LaunchProgram,dpdesk}"; Flags: nowait postinstall skipifsilent
