"""Credentials out of what is stored or printed (rulegauge.core.redact)."""

from __future__ import annotations

from rulegauge.core.redact import MASK, redact_params, redact_text, redact_url


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
