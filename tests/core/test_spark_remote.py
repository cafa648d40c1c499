"""Which Spark Connect addresses may carry a release's exact aggregates (dpdesk/core/release/engines/spark/session.py,
issue 32): a host other than this machine only with TLS and a token; an address that is not ``sc://HOST:PORT`` is
refused as such; a token is never in a message; the address is written as pyspark reads it. No Spark is started
(pyspark is not needed)."""

from __future__ import annotations

import pytest

from dpdesk.core.release.engines.spark.session import (
    SparkTarget,
    SparkUnavailable,
    check_remote,
    connect_url,
    shown_address,
)

ALLOWED = [
    "sc://127.0.0.1:15002",
    "sc://127.0.0.2:1",
    "sc://localhost:15002",
    "sc://[::1]:15002",
    "sc://127.0.0.1:15002;token=TOKEN",
    "sc://spark.example.org:443;use_ssl=true;token=TOKEN",
    "sc://spark.example.org:443/;use_ssl=TRUE;token=TOKEN",
    "sc://10.1.2.3:15002;token=TOKEN;use_ssl=true",
]
NEEDS_TLS_AND_TOKEN = [
    "sc://spark.example.org:15002",
    "sc://spark.example.org:15002;token=TOKEN",
    "sc://spark.example.org:15002;use_ssl=true",
    "sc://spark.example.org:15002;use_ssl=true;token=",
    "sc://spark.example.org:15002;use_ssl=false;token=TOKEN",
    "sc://10.1.2.3:15002;token=TOKEN",
    "sc://192.168.0.5:15002",
    "sc://0.0.0.0:15002",
    "sc://localhost.example.org:15002;token=TOKEN",
    "sc://[2001:db8::1]:15002;token=TOKEN",
]
NOT_AN_ADDRESS = [
    "spark://spark.example.org:7077;token=TOKEN",
    "sc://127.0.0.1:abc;token=TOKEN",
    "sc://127.0.0.1:99999;token=TOKEN",
    "sc://127.0.0.1:15002/path;token=TOKEN",
    "sc://:15002;token=TOKEN",
    "127.0.0.1:15002",
    "sc://user:TOKEN@spark.example.org:15002/x",
]


@pytest.mark.parametrize("address", ALLOWED)
def test_loopback_or_tls_with_a_token_is_allowed(address: str) -> None:
    check_remote(address)
    assert SparkTarget(remote=address).shown.startswith("sc://")


@pytest.mark.parametrize("address", NEEDS_TLS_AND_TOKEN)
def test_another_host_without_tls_and_a_token_is_refused(address: str) -> None:
    with pytest.raises(SparkUnavailable) as exc:
        SparkTarget(remote=address)
    text = str(exc.value)
    assert "add ;use_ssl=true;token=TOKEN to the address" in text
    assert text.startswith(shown_address(address) + ":") and "TOKEN" not in text.replace("token=TOKEN", "")


@pytest.mark.parametrize("address", NOT_AN_ADDRESS)
def test_what_is_not_a_spark_connect_address_is_refused_as_such(address: str) -> None:
    with pytest.raises(SparkUnavailable) as exc:
        SparkTarget(remote=address)
    text = str(exc.value)
    assert "is not a Spark Connect address; write it as sc://HOST:PORT" in text
    assert "TOKEN" not in text.replace("token=TOKEN", ""), text
    assert text.startswith(repr(address.split(";")[0].replace("user:TOKEN@", "")) + " is not")


def test_the_token_is_never_shown_and_the_address_is_written_as_pyspark_reads_it() -> None:
    assert shown_address("sc://h.example.org:1;use_ssl=true;token=SECRET123") == "sc://h.example.org:1"
    assert shown_address("sc://h.example.org/;token=SECRET123") == "sc://h.example.org:15002"
    assert connect_url("sc://h:1;use_ssl=true;token=T") == "sc://h:1/;use_ssl=true;token=T"
    assert connect_url("sc://h:1/;token=T") == "sc://h:1/;token=T"
    assert connect_url("sc://h:1") == "sc://h:1/"


def test_master_and_remote_are_one_or_the_other() -> None:
    for kwargs in ({}, {"master": "local[1]", "remote": "sc://127.0.0.1:1"}):
        with pytest.raises(SparkUnavailable, match="name one of --spark-master"):
            SparkTarget(**kwargs)
    for master in ("yarn", "spark://h:7077", "k8s://h"):
        with pytest.raises(SparkUnavailable, match="--spark-master takes local"):
            SparkTarget(master=master)
    assert SparkTarget(master="local[2]").shown == "local[2]"
