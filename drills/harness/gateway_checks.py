"""The hostile-traffic drill's own schemathesis checks (loaded through SCHEMATHESIS_HOOKS).

gateway_no_server_error: no 5xx, except the spec's one planned 5xx: 501 `unsupported_feature` for the
  responses features needing stored state (spec, Errors: known cases).
gateway_error_envelope: every 4xx/5xx body is the spec's envelope
  `{"code": "<status>", "error": {"message", "type", "param", "code", "traceId"}, "traceId"}`; the key
  endpoints answer plain JSON instead (spec: "do not use the backend envelope"), OpenRouter's
  `{"error": {"code": <status>, "message"}}` (API-NOTES), unless the edge refused the key before them.

Each failure is also appended as a JSON line to $GW_FUZZ_FAILURES, for the drill to report.
"""
import json
import os
import re

import schemathesis

KEY_PATHS = re.compile(r"^/v1/keys?(/|$)")
STORED_STATE_501 = "unsupported_feature"


def _record(kind, case, response, detail):
    path = os.environ.get("GW_FUZZ_FAILURES")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({
                "check": kind,
                "method": case.method,
                "path": case.path,
                "url": response.request.url,
                "status": response.status_code,
                "body": response.text[:500],
                "detail": detail,
            }) + "\n")
    raise AssertionError(f"{kind}: {detail} ({case.method} {response.request.url} -> {response.status_code})")


def _json(response):
    try:
        return json.loads(response.text)
    except ValueError:
        return None


def _is_envelope(body, status):
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return False
    e = body["error"]
    return (
        body.get("code") == str(status)
        and isinstance(body.get("traceId"), str)
        and isinstance(e.get("message"), str)
        and isinstance(e.get("type"), str)
        and isinstance(e.get("code"), str)
        and (e.get("param") is None or isinstance(e.get("param"), str))
        and isinstance(e.get("traceId"), str)
    )


def _is_key_endpoint_error(body, status):
    e = body.get("error") if isinstance(body, dict) else None
    return isinstance(e, dict) and e.get("code") == status and isinstance(e.get("message"), str)


@schemathesis.check
def gateway_no_server_error(ctx, response, case):
    status = response.status_code
    if status < 500:
        return None
    body = _json(response)
    if status == 501 and _is_envelope(body, status) and body["error"]["code"] == STORED_STATE_501:
        return None
    _record("server_error", case, response, f"HTTP {status}")


@schemathesis.check
def gateway_error_envelope(ctx, response, case):
    status = response.status_code
    if status < 400:
        return None
    body = _json(response)
    if _is_envelope(body, status):
        return None
    if KEY_PATHS.match(case.path) and _is_key_endpoint_error(body, status):
        return None
    _record("not_envelope", case, response, "error body is not the spec's envelope")
