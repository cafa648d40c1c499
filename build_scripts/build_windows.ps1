<#
.SYNOPSIS
  Build the Windows installer of dpdesk: dist\dpdesk-<version>-windows-x64-setup.exe (Inno Setup 6),
  plus dist\dpdesk-<version>-windows-x64.zip (the same folder, portable).

.DESCRIPTION
  Steps: venv with dpdesk + PyInstaller -> PyInstaller (build_scripts\dpdesk.spec: dpdesk.exe, windowed,
  and dpdesk-cli.exe, console, in one folder) -> self-test and main window from dist\dpdesk -> zip ->
  Inno Setup (build_scripts\dpdesk.iss) -> install silently for the current user into an empty folder,
  run the self-test from there, uninstall. Any failure stops the script with a non-zero exit code.

  Not run in this repository's own checks (no Windows machine); kept consistent with dpdesk.spec,
  which the Linux build exercises. See build_scripts\README.md.

  Code signing (Authenticode), only when both are set (CI: from repository secrets), else skipped with a note:
    WINDOWS_CERT_PFX       path of the code-signing certificate (.pfx; CI writes the secret to a temporary file)
    WINDOWS_CERT_PASSWORD  its password
  dpdesk.exe and dpdesk-cli.exe are signed before the zip and the installer are made, the installer after;
  signtool (Windows SDK) signs with SHA-256 and an RFC 3161 timestamp (WINDOWS_TIMESTAMP_URL, default
  http://timestamp.digicert.com) and "signtool verify /pa" checks each signature.

.EXAMPLE
  powershell -ExecutionPolicy Bypass -File build_scripts\build_windows.ps1
  powershell -ExecutionPolicy Bypass -File build_scripts\build_windows.ps1 -Python py -Venv C:\venvs\dpdesk-build
#>
param(
    [string]$Python = "python",      # interpreter used to create the venv (3.11+, 64-bit)
    [string]$Venv = "",              # build venv (created if missing); default build\venv-windows
    [switch]$SkipInstaller,          # stop after the zip
    [switch]$SkipInstallTest         # build the installer but do not install/uninstall it
)
$ErrorActionPreference = "Stop"
Set-StrictMode -Version Latest

$Root = Split-Path -Parent $PSScriptRoot
Set-Location $Root
if (-not $Venv) { $Venv = Join-Path $Root "build\venv-windows" }
$PyInstallerVersion = "6.22.3"
$Dist = Join-Path $Root "dist"
$Work = Join-Path $Root "build\pyinstaller"
$Bundle = Join-Path $Dist "dpdesk"
$Started = Get-Date

function Step([string]$Text) { Write-Host ("`n== {0}  [{1:n0}s]" -f $Text, ((Get-Date) - $Started).TotalSeconds) }

function Invoke-Checked([string]$Exe, [string[]]$ArgList) {
    & $Exe @ArgList
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($ArgList -join ' ') failed with exit code $LASTEXITCODE" }
}

# Run a console program with extra environment variables; return its output lines; throw on failure.
# (Qt writes harmless warnings to stderr: they must not stop Windows PowerShell 5.1, hence "Continue".)
function Invoke-WithEnv([hashtable]$Vars, [string]$Exe, [string[]]$ArgList) {
    $saved = @{}
    foreach ($k in $Vars.Keys) {
        $saved[$k] = [Environment]::GetEnvironmentVariable($k)
        [Environment]::SetEnvironmentVariable($k, $Vars[$k])
    }
    $eap = $ErrorActionPreference
    $ErrorActionPreference = "Continue"
    try {
        $out = & $Exe @ArgList 2>&1 | ForEach-Object { "$_" }
        $code = $LASTEXITCODE
    } finally {
        $ErrorActionPreference = $eap
        foreach ($k in $saved.Keys) { [Environment]::SetEnvironmentVariable($k, $saved[$k]) }
    }
    $out | ForEach-Object { Write-Host $_ }
    if ($code -ne 0) { throw "$Exe $($ArgList -join ' ') failed with exit code $code" }
    return $out
}

function Find-SignTool {
    $st = Get-Command signtool.exe -ErrorAction SilentlyContinue | Select-Object -First 1 -ExpandProperty Source
    if (-not $st) {
        $st = Get-ChildItem "${env:ProgramFiles(x86)}\Windows Kits\10\bin\*\x64\signtool.exe" -ErrorAction SilentlyContinue |
            Sort-Object FullName -Descending | Select-Object -First 1 -ExpandProperty FullName
    }
    return $st
}

function Sign-Files([string[]]$Files) {
    if (-not $env:WINDOWS_CERT_PFX -or -not $env:WINDOWS_CERT_PASSWORD) {
        Write-Host "not signed: WINDOWS_CERT_PFX and WINDOWS_CERT_PASSWORD are not set (SmartScreen will warn users)"
        return
    }
    $st = Find-SignTool
    if (-not $st) { throw "signtool.exe not found: install the Windows 10/11 SDK's signing tools" }
    $ts = if ($env:WINDOWS_TIMESTAMP_URL) { $env:WINDOWS_TIMESTAMP_URL } else { "http://timestamp.digicert.com" }
    foreach ($f in $Files) {
        Invoke-Checked $st @("sign", "/fd", "sha256", "/tr", $ts, "/td", "sha256", "/f", $env:WINDOWS_CERT_PFX,
            "/p", $env:WINDOWS_CERT_PASSWORD, "/d", "dpdesk", $f)
        Invoke-Checked $st @("verify", "/pa", $f)
    }
}

function Test-Bundle([string]$Folder, [string]$Label) {
    $tmpHome = Join-Path ([IO.Path]::GetTempPath()) ("dpdesk-try-" + [guid]::NewGuid())
    New-Item -ItemType Directory -Path $tmpHome | Out-Null
    try {
        Write-Host "-- ${Label}: dpdesk-cli.exe --selftest"
        Invoke-WithEnv @{ QT_QPA_PLATFORM = "offscreen" } (Join-Path $Folder "dpdesk-cli.exe") @("--selftest") | Out-Null
        Write-Host "-- ${Label}: main window (offscreen)"
        $out = Invoke-WithEnv @{ QT_QPA_PLATFORM = "offscreen"; DPDESK_STARTUP_PROBE = "1"; DPDESK_HOME = $tmpHome } `
            (Join-Path $Folder "dpdesk-cli.exe") @()
        if (-not ($out -match "^WINDOW_SHOWN ")) { throw "no WINDOW_SHOWN line from $Folder" }
        Write-Host "-- ${Label}: windowed dpdesk.exe starts and exits 0"
        $env:QT_QPA_PLATFORM = "offscreen"; $env:DPDESK_STARTUP_PROBE = "1"; $env:DPDESK_HOME = $tmpHome
        try {
            $p = Start-Process -FilePath (Join-Path $Folder "dpdesk.exe") -PassThru -Wait -WindowStyle Hidden
        } finally {
            Remove-Item Env:QT_QPA_PLATFORM, Env:DPDESK_STARTUP_PROBE, Env:DPDESK_HOME -ErrorAction SilentlyContinue
        }
        if ($p.ExitCode -ne 0) { throw "dpdesk.exe exited with $($p.ExitCode)" }
    } finally {
        Remove-Item -Recurse -Force $tmpHome -ErrorAction SilentlyContinue
    }
}

# --------------------------------------------------------------------------- 1. build venv
Step "build venv $Venv"
if (-not (Test-Path (Join-Path $Venv "Scripts\python.exe"))) { Invoke-Checked $Python @("-m", "venv", $Venv) }
$Py = Join-Path $Venv "Scripts\python.exe"
Invoke-Checked $Py @("-c", "import sys, struct; assert sys.version_info >= (3, 11) and struct.calcsize('P') == 8, sys.version")
Invoke-Checked $Py @("-m", "pip", "install", "-q", "-e", $Root, "pyinstaller==$PyInstallerVersion", "pyinstaller-hooks-contrib")
Invoke-Checked $Py @("-m", "pip", "check")
$Version = (& $Py -c "import dpdesk; print(dpdesk.__version__)").Trim()

# --------------------------------------------------------------------------- 2. PyInstaller
Step "PyInstaller $PyInstallerVersion"
if (Test-Path $Bundle) { Remove-Item -Recurse -Force $Bundle }
Invoke-Checked (Join-Path $Venv "Scripts\pyinstaller.exe") @(
    "--noconfirm", "--log-level", "WARN", "--distpath", $Dist, "--workpath", $Work, (Join-Path $Root "build_scripts\dpdesk.spec"))
foreach ($exe in @("dpdesk.exe", "dpdesk-cli.exe")) {
    if (-not (Test-Path (Join-Path $Bundle $exe))) { throw "PyInstaller did not produce $exe" }
}
$commit = "unknown"
try { $commit = (git -C $Root rev-parse --short HEAD) } catch { }
@(
    "dpdesk $Version for Windows x64",
    "commit: $commit",
    "built: $((Get-Date).ToUniversalTime().ToString('yyyy-MM-ddTHH:mmZ'))",
    "start: dpdesk.exe (desktop app); dpdesk-cli.exe --help (command line)",
    "",
    "Python packages:"
) + (& $Py -m pip freeze --exclude-editable | Where-Object { $_ -notmatch "^pyinstaller" }) |
    Set-Content -Encoding utf8 (Join-Path $Bundle "BUILD-INFO.txt")

Step "code signing (executables)"
Sign-Files @((Join-Path $Bundle "dpdesk.exe"), (Join-Path $Bundle "dpdesk-cli.exe"))

# --------------------------------------------------------------------------- 3. run it from the folder
Step "self-test and main window from $Bundle"
Test-Bundle $Bundle "dist"

# --------------------------------------------------------------------------- 4. portable zip
Step "zip"
$Zip = Join-Path $Dist "dpdesk-$Version-windows-x64.zip"
if (Test-Path $Zip) { Remove-Item -Force $Zip }
Compress-Archive -Path $Bundle -DestinationPath $Zip -CompressionLevel Optimal
"{0}: {1:n1} MiB; unpacked {2:n1} MiB" -f $Zip, ((Get-Item $Zip).Length / 1MB),
    ((Get-ChildItem -Recurse -File $Bundle | Measure-Object -Sum Length).Sum / 1MB) | Write-Host
if ($SkipInstaller) { Step "done (no installer)"; exit 0 }

# --------------------------------------------------------------------------- 5. Inno Setup
Step "Inno Setup"
$Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue | Select-Object -First 1 -ExpandProperty Source)
if (-not $Iscc) {
    foreach ($c in @("${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe", "$env:ProgramFiles\Inno Setup 6\ISCC.exe")) {
        if ($c -and (Test-Path $c)) { $Iscc = $c; break }
    }
}
if (-not $Iscc -and (Get-Command choco -ErrorAction SilentlyContinue)) {
    Invoke-Checked choco @("install", "innosetup", "-y", "--no-progress")
    $Iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe"
}
if (-not $Iscc -or -not (Test-Path $Iscc)) { throw "Inno Setup 6 (ISCC.exe) not found: install it from https://jrsoftware.org/isdl.php" }
Invoke-Checked $Iscc @("/Q", "/DAppVersion=$Version", "/DSourceDir=$Bundle", "/DOutputDir=$Dist",
    "/DRepoRoot=$Root", (Join-Path $Root "build_scripts\dpdesk.iss"))
$Setup = Join-Path $Dist "dpdesk-$Version-windows-x64-setup.exe"
if (-not (Test-Path $Setup)) { throw "Inno Setup did not produce $Setup" }
Sign-Files @($Setup)
"{0}: {1:n1} MiB" -f $Setup, ((Get-Item $Setup).Length / 1MB) | Write-Host

# --------------------------------------------------------------------------- 6. install, run, uninstall
if (-not $SkipInstallTest) {
    Step "install into an empty folder, run, uninstall"
    $Target = Join-Path ([IO.Path]::GetTempPath()) ("dpdesk-install-" + [guid]::NewGuid())
    $p = Start-Process -FilePath $Setup -Wait -PassThru -ArgumentList @(
        "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/CURRENTUSER", "/DIR=`"$Target`"", "/TASKS=openwith")
    if ($p.ExitCode -ne 0) { throw "the installer exited with $($p.ExitCode)" }
    Test-Bundle $Target "installed"
    $uninstaller = Get-ChildItem $Target -Filter "unins*.exe" | Select-Object -First 1
    if (-not $uninstaller) { throw "no uninstaller in $Target" }
    $p = Start-Process -FilePath $uninstaller.FullName -Wait -PassThru -ArgumentList @("/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART")
    if ($p.ExitCode -ne 0) { throw "the uninstaller exited with $($p.ExitCode)" }
    Start-Sleep -Seconds 2  # the uninstaller removes itself through a helper process
    if (Test-Path (Join-Path $Target "dpdesk.exe")) { throw "the uninstaller left dpdesk.exe behind" }
}
Step "done: $Setup"
