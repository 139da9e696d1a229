"""Credentials out of what is stored or printed (rulegauge.core.redact)."""

from __future__ import annotations

import json
from urllib.parse import quote

from rulegauge.core.redact import MASK, Secrets, mask_url, redact_params, redact_text, redact_url


def test_urls_lose_userinfo_query_and_fragment() -> None:
    assert redact_url("http://alice:S3cretPW@127.0.0.1:8/ok?key=1#f") == "http://127.0.0.1:8/ok"


def test_text_masks_tokens_keys_and_url_passwords_but_not_rules_text() -> None:
    text = ('HTTP 401: {"error": "Bearer sk-abcdef123456", "api_key": "xyz"} '
            "http://alice:pw@h/x?token=abc; place the token on the board")
    out = redact_text(text)
    for secret in ("sk-abcdef123456", "xyz", "alice:pw", "token=abc"):
        assert secret not in out
    assert "Bearer ***" in out and "place the token on the board" in out


def test_params_mask_secret_keys_and_redact_urls_and_headers() -> None:
    out = redact_params({"base_url": "http://u:p@h:1/v1?x=1", "api_key": "k", "model": "m",
                         "headers": {"Authorization": "Bearer abcdefgh", "X-Trace": "1"},
                         "api_key_env": "OPENAI_KEY", "timeout_s": 3})
    assert out == {"base_url": "http://h:1/v1", "api_key": MASK, "model": "m",
                   "headers": {"Authorization": MASK, "X-Trace": "1"},
                   "api_key_env": "OPENAI_KEY", "timeout_s": 3}


def test_line_numbers_and_dated_ids_are_places_not_secrets() -> None:
    # issue 33 (9): `secret:12:` is line 12 of a file named secret; pk-20241203 a dated folder
    assert redact_text("runs/secret:12: expected a JSON object") == \
        "runs/secret:12: expected a JSON object"
    assert redact_text("/data/pk-20241203/g.yaml:3: duplicate key") == \
        "/data/pk-20241203/g.yaml:3: duplicate key"
    # what is a credential stays masked: a value after a space or a quote, a key with letters
    assert redact_text('password: 1234 "secret":5678 sk-live4f9Qz81Lw secret:12:34') == \
        f'password: {MASK} "secret":{MASK} sk-{MASK} secret:{MASK}'


def test_mask_url_keeps_what_tells_requests_apart() -> None:
    assert mask_url("http://ann:pw@H:1/s?q={question}&api_key=k1&n=3") == \
        f"http://{MASK}@H:1/s?q={{question}}&api_key={MASK}&n=3"
    assert mask_url("http://h/s?q=a%20b") == "http://h/s?q=a%20b"  # untouched without secrets


def test_secrets_of_a_request_cover_every_form_it_may_come_back_in() -> None:
    s = Secrets.of_request("http://ann:pw-S3cret@h/x?api_key=QK12345&q=rules",
                           {"Authorization": "Bearer TOK-98765", "Cookie": "a=CK-1234; b=no",
                            "Accept": "application/json"}, ["ENV-VALUE1"])
    echoed = json.dumps({"auth": "Bearer TOK-98765", "basic": "YW5uOnB3LVMzY3JldA==",
                         "path": "/x?api_key=QK12345&q=rules", "cookie": "a=CK-1234; b=no",
                         "quoted": quote("pw-S3cret/ENV-VALUE1", safe=""), "raw": "TOK-98765"})
    out = s.clean(echoed)
    for secret in ("TOK-98765", "pw-S3cret", "QK12345", "CK-1234", "ENV-VALUE1", "YW5uOnB3"):
        assert secret not in out, out
    assert "rules" in out and "application/json" not in s.values


def test_excerpt_scrubs_known_secrets_before_the_cut() -> None:
    secret = "Zq7wXc4v"  # no pattern knows it: only the request's own values do
    text = "x" * 196 + secret + "y" * 50
    assert Secrets((secret,)).excerpt(text.encode(), 200) == "x" * 196 + MASK + "y"
    assert "Zq7w" in Secrets().excerpt(text, 200)  # the patterns alone would leave a piece
