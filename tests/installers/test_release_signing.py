"""Issue 25 item 4: build_scripts/sign_release.py writes SHA256SUMS and a detached Ed25519 signature that the
user's own tools check: coreutils ``sha256sum -c`` and the system's OpenSSL with the exact command docs/install.md
gives (``openssl pkeyutl -verify -pubin -inkey release-key.pub.pem -rawin -in SHA256SUMS -sigfile
SHA256SUMS.sig``), and minisign where it is installed. Real processes, a temporary key: the release key is never
in the repository. The script is new (the tests fail without it)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "build_scripts" / "sign_release.py"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (shutil.which("openssl") and shutil.which("sha256sum")), reason="openssl, coreutils"
    ),
]


def script(*args: str | Path, key: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DPDESK_RELEASE_KEY"}
    if key is not None:
        env["DPDESK_RELEASE_KEY"] = str(key)
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def tool(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=60, check=False)


#: the exact command docs/install.md gives users
OPENSSL_VERIFY = "openssl pkeyutl -verify -pubin -inkey {key} -rawin -in SHA256SUMS -sigfile SHA256SUMS.sig"


def openssl_verify(dist: Path, public: Path) -> subprocess.CompletedProcess[str]:
    argv = [str(public) if a == "{key}" else a for a in OPENSSL_VERIFY.split()]
    return tool(*argv, cwd=dist)


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, Path]:
    """A dist folder with two artefacts, checksummed and signed with a fresh key: (dist, public key PEM)."""
    key = tmp_path / "keys" / "release.key"
    assert script("--keygen", key).returncode == 0
    assert (key.stat().st_mode & 0o777) == 0o600
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "dpdesk-1.2.3-linux-x86_64.tar.gz").write_bytes(os.urandom(5000))
    (dist / "dpdesk_1.2.3_amd64.deb").write_bytes(os.urandom(3000))
    r = script(dist, *sorted(dist.iterdir()), key=key)
    assert r.returncode == 0 and "signed:" in r.stdout, r.stdout + r.stderr
    return dist, key.with_name("release.key.pub.pem")


def test_the_users_tools_check_the_download_and_its_signature(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    sums = tool("sha256sum", "-c", "SHA256SUMS", cwd=dist)
    assert sums.returncode == 0 and sums.stdout.count(": OK") == 2, sums.stdout + sums.stderr
    v = openssl_verify(dist, public)
    assert v.returncode == 0 and "Signature Verified Successfully" in v.stdout, v.stdout + v.stderr


def test_a_changed_artefact_or_checksum_file_is_caught(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    tarball = dist / "dpdesk-1.2.3-linux-x86_64.tar.gz"
    data = bytearray(tarball.read_bytes())
    data[100] ^= 1
    tarball.write_bytes(bytes(data))
    assert tool("sha256sum", "-c", "SHA256SUMS", cwd=dist).returncode == 1
    # an attacker who changed the artefact writes its new checksum: the signature no longer verifies
    new = tool("sha256sum", tarball.name, "dpdesk_1.2.3_amd64.deb", cwd=dist).stdout
    (dist / "SHA256SUMS").write_text(new, encoding="utf-8")
    assert tool("sha256sum", "-c", "SHA256SUMS", cwd=dist).returncode == 0
    v = openssl_verify(dist, public)
    assert v.returncode != 0 and "Signature Verified Successfully" not in v.stdout


def test_another_key_does_not_verify(signed: tuple[Path, Path], tmp_path: Path) -> None:
    dist, _public = signed
    other = tmp_path / "other" / "k"
    assert script("--keygen", other).returncode == 0
    assert openssl_verify(dist, other.with_name("k.pub.pem")).returncode != 0


@pytest.mark.skipif(not shutil.which("minisign"), reason="minisign not installed")
def test_minisign_checks_the_same_signature(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    pub = public.with_name("release.key.minisign.pub")
    ok = tool("minisign", "-Vm", "SHA256SUMS", "-p", pub, cwd=dist)
    assert ok.returncode == 0 and "Trusted comment: file:SHA256SUMS" in ok.stdout, ok.stdout + ok.stderr
    (dist / "SHA256SUMS").write_text("0" * 64 + "  dpdesk_1.2.3_amd64.deb\n", encoding="utf-8")
    assert tool("minisign", "-Vm", "SHA256SUMS", "-p", pub, cwd=dist).returncode != 0


def test_without_a_key_the_checksums_are_written_and_signing_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.tar.gz").write_bytes(b"artefact")
    r = script(tmp_path, tmp_path / "a.tar.gz")
    assert r.returncode == 0 and "not signed: DPDESK_RELEASE_KEY is not set" in r.stdout, r.stdout + r.stderr
    assert (tmp_path / "SHA256SUMS").is_file() and not (tmp_path / "SHA256SUMS.sig").exists()


def test_a_bad_key_is_a_message_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a.tar.gz").write_bytes(b"artefact")
    loose = tmp_path / "loose.key"
    assert script("--keygen", loose).returncode == 0
    loose.chmod(0o644)
    r = script(tmp_path, tmp_path / "a.tar.gz", key=loose)
    assert r.returncode == 2 and "readable by others; chmod 600" in r.stderr and "Traceback" not in r.stderr
    junk = tmp_path / "junk.key"
    junk.write_text("not a key\n")
    junk.chmod(0o600)
    r = script(tmp_path, tmp_path / "a.tar.gz", key=junk)
    assert (
        r.returncode == 2 and "not an unencrypted PEM private key" in r.stderr and "Traceback" not in r.stderr
    )
    r = script(tmp_path, tmp_path / "a.tar.gz", key=tmp_path / "missing.key")
    assert r.returncode == 2 and "cannot read the release key" in r.stderr
    assert not (tmp_path / "SHA256SUMS.sig").exists()


def test_the_published_public_key_is_an_ed25519_key() -> None:
    """resources/release-key.pub.pem is what docs/install.md prints and users verify with."""
    pem = ROOT / "resources" / "release-key.pub.pem"
    r = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", str(pem), "-text", "-noout"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and "ED25519 Public-Key" in r.stdout, r.stdout + r.stderr
    der = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", str(pem), "-outform", "DER"], capture_output=True, check=True
    ).stdout
    fp = hashlib.sha256(der).hexdigest()
    doc = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert fp in doc
    assert OPENSSL_VERIFY.format(key="release-key.pub.pem") in doc
