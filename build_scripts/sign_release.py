"""Checksums and a detached Ed25519 signature over a release's artefacts, checkable with tools users already have.

    python build_scripts/sign_release.py DIST_DIR ARTEFACT...     # writes DIST_DIR/SHA256SUMS (+ .sig, .minisig)
    python build_scripts/sign_release.py --keygen KEY_FILE         # makes a release key pair (once per project)

* ``SHA256SUMS``: one ``<sha256>  <file name>`` line per artefact, the format of coreutils ``sha256sum``, so a
  user checks a download with ``sha256sum -c --ignore-missing SHA256SUMS``.
* ``SHA256SUMS.sig``: the raw 64-byte Ed25519 signature (RFC 8032, "pure" Ed25519) of the file ``SHA256SUMS``,
  checked with the system's OpenSSL (3.0 or later) and the project's public key (``resources/release-key.pub.pem``,
  also printed in docs/install.md)::

      openssl pkeyutl -verify -pubin -inkey release-key.pub.pem -rawin -in SHA256SUMS -sigfile SHA256SUMS.sig

* ``SHA256SUMS.minisig``: the same key's signature in minisign's format (``minisign -Vm SHA256SUMS -P <key>``;
  algorithm ``ED``: Ed25519 over the BLAKE2b-512 hash of the file, plus the global signature over the signature
  and its trusted comment), for users who have minisign or signify-compatible tools.

The private key is never in the repository: it is read from the file named by the environment variable
``DPDESK_RELEASE_KEY`` (PKCS#8 PEM, unencrypted, mode 600; CI: a secret written to a temporary file). Without
it the checksums are written and signing is skipped with a message (exit 0): a local build is not a release.
A key that cannot be read, or is not Ed25519, stops with exit 2. The public key's fingerprint is the SHA-256 of
its DER encoding: ``openssl pkey -pubin -in release-key.pub.pem -outform DER | sha256sum``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import stat
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ENV = "DPDESK_RELEASE_KEY"
SUMS = "SHA256SUMS"


class Refused(Exception):
    """A problem the user fixes (exit 2)."""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_sums(dist: Path, artefacts: list[Path]) -> Path:
    lines = []
    for a in artefacts:
        if not a.is_file():
            raise Refused(f"{a} is not a file: give the artefacts to checksum (e.g. dist/dpdesk-*.tar.gz)")
        if a.resolve().parent != dist.resolve():
            raise Refused(f"{a} is not in {dist}: SHA256SUMS names files beside it, so they must be there")
        if any(c in a.name for c in "\n\r\\"):
            raise Refused(
                f"{a.name!r}: a file name with a newline or backslash cannot be listed in SHA256SUMS"
            )
        lines.append(f"{sha256(a)}  {a.name}\n")
    out = dist / SUMS
    out.write_text("".join(lines), encoding="utf-8")
    return out


def fingerprint(public: Ed25519PublicKey) -> str:
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def minisign_key_id(public: Ed25519PublicKey) -> bytes:
    """minisign's 8-byte key number: any value, fixed per key; here the first 8 bytes of the fingerprint."""
    return bytes.fromhex(fingerprint(public))[:8]


def minisign_public(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    keyid = minisign_key_id(public)
    return (
        f"untrusted comment: minisign public key {keyid[::-1].hex().upper()}\n"
        + base64.b64encode(b"Ed" + keyid + raw).decode()
        + "\n"
    )


def minisign_signature(key: Ed25519PrivateKey, data: bytes, trusted: str) -> str:
    keyid = minisign_key_id(key.public_key())
    sig = key.sign(hashlib.blake2b(data, digest_size=64).digest())
    global_sig = key.sign(sig + trusted.encode())
    return (
        "untrusted comment: signature from the dpdesk release key\n"
        + base64.b64encode(b"ED" + keyid + sig).decode()
        + f"\ntrusted comment: {trusted}\n"
        + base64.b64encode(global_sig).decode()
        + "\n"
    )


def load_key(path: Path) -> Ed25519PrivateKey:
    try:
        mode = path.stat().st_mode
        data = path.read_bytes()
    except OSError as exc:
        raise Refused(
            f"{ENV}={path}: cannot read the release key ({exc.strerror}); give the key file's path"
        ) from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise Refused(f"{ENV}={path}: the release key is readable by others; chmod 600 {path}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise Refused(f"{ENV}={path}: not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise Refused(f"{ENV}={path}: the release key must be Ed25519, not {type(key).__name__}")
    return key


def sign(dist: Path, sums: Path, key: Ed25519PrivateKey, public_pem: Path | None) -> None:
    data = sums.read_bytes()
    (dist / f"{SUMS}.sig").write_bytes(key.sign(data))
    trusted = f"file:{SUMS}"
    (dist / f"{SUMS}.minisig").write_text(minisign_signature(key, data, trusted), encoding="utf-8")
    if public_pem is not None:
        expected = serialization.load_pem_public_key(public_pem.read_bytes())
        if fingerprint(key.public_key()) != fingerprint(expected):  # type: ignore[arg-type]
            print(
                f"sign_release.py: warning: {ENV} is not the key of {public_pem} "
                f"(signed with {fingerprint(key.public_key())}): users checking with the published key will fail",
                file=sys.stderr,
            )


def keygen(path: Path) -> None:
    if path.exists():
        raise Refused(f"{path} exists: a release key is made once; remove it first if you mean to replace it")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    public = key.public_key()
    pub_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    path.with_name(path.name + ".pub.pem").write_bytes(pub_pem)
    path.with_name(path.name + ".minisign.pub").write_text(minisign_public(public), encoding="utf-8")
    print(f"private key: {path} (mode 600; keep it out of any repository)")
    print(f"public key:  {path.name}.pub.pem (commit as resources/release-key.pub.pem)")
    print(f"minisign:    {path.name}.minisign.pub")
    print(f"fingerprint (sha256 of the DER public key): {fingerprint(public)}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "dist", type=Path, nargs="?", help="the folder of the artefacts (SHA256SUMS is written there)"
    )
    p.add_argument("artefacts", type=Path, nargs="*")
    p.add_argument("--keygen", type=Path, metavar="KEY_FILE", help="make a release key pair and stop")
    p.add_argument(
        "--public",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "resources" / "release-key.pub.pem",
        help="the published public key: warn when the signing key is another (default: the repository's)",
    )
    args = p.parse_args(argv)
    try:
        if args.keygen:
            keygen(args.keygen)
            return 0
        if args.dist is None or not args.artefacts:
            p.error("give the folder of the artefacts and the artefacts (or --keygen KEY_FILE)")
        if not args.dist.is_dir():
            raise Refused(f"{args.dist} is not a folder")
        sums = write_sums(args.dist, args.artefacts)
        print(f"wrote {sums} ({len(args.artefacts)} file(s)); check: cd {args.dist} && sha256sum -c {SUMS}")
        key_path = os.environ.get(ENV)
        if not key_path:
            print(
                f"not signed: {ENV} is not set (the path of the release's Ed25519 private key, PEM, mode 600); "
                "a release build sets it (build_scripts/README.md, 'Signing a release')"
            )
            return 0
        key = load_key(Path(key_path))
        sign(args.dist, sums, key, args.public if args.public.is_file() else None)
        print(
            f"signed: {SUMS}.sig (openssl pkeyutl -verify -rawin) and {SUMS}.minisig (minisign -V), key "
            f"{fingerprint(key.public_key())}"
        )
        return 0
    except Refused as exc:
        print(f"sign_release.py: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
