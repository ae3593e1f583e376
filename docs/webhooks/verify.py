"""Verifies a signed gateway callback.

`Svc-Signature: sha256=<hex HMAC-SHA256 of "{Svc-Timestamp}.{raw body}">` under the account's signing secret
(the whole `whsec_...` string, as shown once by PUT /v1/webhooks/settings). Pass the raw body bytes as received,
never a re-serialized object. Python 3.8+, standard library only.
"""
import hashlib
import hmac
import re
import time

TOLERANCE_SECONDS = 300


def verify_gateway_signature(secret, headers, raw_body, now=None):
    """True only for an authentic callback signed within the last 300 s.

    secret: str; headers: a mapping of header names (any case) to values; raw_body: bytes as received.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    timestamp = lowered.get("svc-timestamp", "")
    signature = lowered.get("svc-signature", "")
    if not re.fullmatch(r"[0-9]+", timestamp) or not signature:
        return False
    now = int(time.time()) if now is None else now
    # Refuse old (replayed) and far-future timestamps.
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + raw_body, hashlib.sha256).hexdigest()
    # Constant-time compare.
    return hmac.compare_digest(("sha256=" + digest).encode("ascii"), signature.encode("utf-8"))
