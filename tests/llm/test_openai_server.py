"""The local OpenAI-compatible test server, spoken to with plain urllib."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.llm.openai_server import OpenAITestServer, ScriptedResponse


def _post(url: str, payload: object, headers: dict[str, str] | None = None):
    data = json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers=headers or {})
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


CHAT = {"model": "m1", "messages": [{"role": "user", "content": "q"}]}


def test_default_answer_is_a_plan_from_the_producer():
    seen = []

    def producer(request_json):
        seen.append(request_json)
        return {"kind": "clarify", "question": "which year?"}

    with OpenAITestServer(producer, prompt_tokens=7, completion_tokens=3) as server:
        status, _, body = _post(f"{server.base_url}/chat/completions", CHAT)

    assert status == 200
    assert json.loads(body["choices"][0]["message"]["content"]) == {
        "kind": "clarify", "question": "which year?"
    }
    assert body["model"] == "m1"
    assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert seen == [CHAT]


def test_scripted_responses_are_served_in_order_then_the_default(openai_server):
    openai_server.script(
        ScriptedResponse(status=429, headers={"Retry-After": "7"}),
        ScriptedResponse(plan={"kind": "not_answerable"}, usage=None),
    )
    url = f"{openai_server.base_url}/chat/completions"

    status, headers, body = _post(url, CHAT)
    assert (status, headers["Retry-After"]) == (429, "7")
    assert body["error"]["type"] == "rate_limit_exceeded"

    status, _, body = _post(url, CHAT)
    assert json.loads(body["choices"][0]["message"]["content"]) == {"kind": "not_answerable"}
    assert "usage" not in body

    status, _, body = _post(url, CHAT)
    assert json.loads(body["choices"][0]["message"]["content"])["kind"] == "sql"
    assert openai_server.pending == 0


def test_every_request_is_recorded(openai_server):
    _post(f"{openai_server.base_url}/chat/completions", CHAT, {"Authorization": "Bearer k1"})
    urllib.request.urlopen(f"{openai_server.base_url}/models", timeout=5).close()

    post, get = openai_server.requests
    assert (post.method, post.path, post.json) == ("POST", "/v1/chat/completions", CHAT)
    assert post.authorization == "Bearer k1"
    assert post.messages == CHAT["messages"]
    assert (get.method, get.path) == ("GET", "/v1/models")
    assert openai_server.completion_requests == [post]


def test_models_lists_the_server_model():
    with OpenAITestServer(model="local-llama") as server:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            body = json.loads(response.read())
    assert [m["id"] for m in body["data"]] == ["local-llama"]


def test_unknown_routes_are_404_in_openai_format(openai_server):
    status, _, body = _post(f"{openai_server.base_url}/completions", CHAT)
    assert status == 404
    assert "no route" in body["error"]["message"]


def test_stopping_releases_a_delayed_request():
    # The client gives up after 0.2 s; stopping must not wait out the 60 s delay.
    server = OpenAITestServer().start()
    server.script(ScriptedResponse(delay_s=60))
    with pytest.raises(OSError):
        _post_with_timeout(f"{server.base_url}/chat/completions", CHAT, 0.2)
    server.stop()
    assert len(server.requests) == 1


def _post_with_timeout(url: str, payload: object, timeout: float) -> None:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST")
    urllib.request.urlopen(request, timeout=timeout).close()


def test_port_is_only_known_once_started():
    server = OpenAITestServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
