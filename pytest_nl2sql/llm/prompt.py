"""The chat messages that ask a model for a query plan.

The prompt is a pure function of the :class:`PlanRequest`: the same request always gives
the same messages, so runs are comparable and a prompt change shows up as a diff here.
The JSON Schema is repeated in the prompt because not every OpenAI-compatible server
honours ``response_format``.
"""

from __future__ import annotations

import json

from pytest_nl2sql.llm.base import PlanRequest

__all__ = ["SYSTEM_PROMPT", "build_messages"]

SYSTEM_PROMPT = """\
You translate a user's question about a database into a query plan.
Answer with exactly one JSON object that matches the JSON Schema below: no prose, no \
Markdown, no code fences.
Use only the tables and columns listed in the schema you are given; never invent names.
If the schema cannot answer the question, answer with a plan whose "kind" is \
"not_answerable" and say why.
If the question is ambiguous (it could mean several different queries), answer with a \
plan whose "kind" is "clarify" and ask the one question that would resolve it.
The user's role decides which data they may see; plan only what the question asks.

JSON Schema of the plan:
{json_schema}"""


def build_messages(request: PlanRequest) -> list[dict[str, str]]:
    """Return the system and user messages for ``request``, in chat-completions form."""
    schema_json = json.dumps(request.json_schema, sort_keys=True, ensure_ascii=False)
    system = SYSTEM_PROMPT.format(json_schema=schema_json)
    lines = [f"Role: {request.role}"]
    if request.datasources:
        lines.append(f"Datasources: {', '.join(request.datasources)}")
    lines += [
        "",
        "Schema:",
        request.schema_text.strip(),
        "",
        f"Question: {request.question.strip()}",
    ]
    if request.conversation:  # a clarification's second turn: what was asked and replied
        lines += ["", "Conversation so far:"]
        lines += [f"{'You asked' if who == 'engine' else 'User replied'}: {text.strip()}" for who, text in request.conversation]
        lines += ["", "Plan the answer to the question as the user's replies narrow it."]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n".join(lines)},
    ]
