"""cliver_core.util's helpers, written against cliver-core 0.3.0a5: key=value options, file
reading (encodings, size limit, missing file), context files (the first default found, up
to the git root; a filter; truncation), retries with and without confirmation (a host UI
installed with set_cli_instance answering), the async twin, drop_none, timezones.

Works in $CLIVER_COMPAT_WORKDIR; prints one JSON object.
"""

import asyncio
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from cliver_core import util


class Console:
    def __init__(self) -> None:
        self.printed: list[str] = []

    def print(self, text: str) -> None:
        self.printed.append(text)


class UI:
    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.asked: list[list] = []

    def ask_input(self, prompt: str, choices: list[str]) -> str:
        self.asked.append([prompt, choices])
        return self.answers.pop(0)


class Host:
    def __init__(self, answers: list[str]) -> None:
        self.ui = UI(answers)


def error(call) -> list:
    try:
        return ["ok", call()]
    except Exception as e:
        return [type(e).__name__, str(e).replace(str(work), "<W>")]


work = Path(os.environ["CLIVER_COMPAT_WORKDIR"]).resolve()
out: dict = {}

console = Console()
out["options"] = util.parse_key_value_options(
    ("a=1", "b=2.5", "c=x", "d=1.2.3", "e=", "noeq", "f=a=b", "g=-1", "h=.5"), console
)
out["options_printed"] = console.printed
out["options_empty"] = util.parse_key_value_options(())

(work / "utf8.txt").write_text("héllo", encoding="utf-8")
(work / "latin.txt").write_bytes("café".encode("latin-1"))
(work / "big.txt").write_text("x" * 50)
out["read"] = [
    error(lambda: util.read_file_content(str(work / "utf8.txt"))),
    error(lambda: util.read_file_content(str(work / "latin.txt"))),
    error(lambda: util.read_file_content(str(work / "big.txt"), max_size=10)),
    error(lambda: util.read_file_content(str(work / "missing.txt"))),
]

project = work / "project"
(project / ".git").mkdir(parents=True)
sub = project / "src" / "pkg"
sub.mkdir(parents=True)
(project / "CLAUDE.md").write_text("Use tabs.")
(project / "src" / "Cliver.md").write_text("  \n")
(sub / "NOTES.md").write_text("n" * 30)
(work / "Cliver.md").write_text("outside the repo")
out["context_default"] = util.read_context_files(str(sub))
out["context_filter"] = util.read_context_files(
    str(sub), file_filter=["NOTES.md", "CLAUDE.md", "Cliver.md"], max_chars=10
)
out["context_none"] = util.read_context_files(str(work / "project" / ".git"), ["nothing.md"])
out["max_context_chars"] = util.MAX_CONTEXT_FILE_CHARS


def flaky(failures: int):
    calls = []

    def f(x, *, y=0):
        calls.append(x)
        if len(calls) <= failures:
            raise RuntimeError(f"fail {len(calls)}")
        return [x + y, len(calls)]

    return f


out["retry_no_confirm"] = error(
    lambda: util.retry_with_confirmation(flaky(2), 1, y=2, retry_delay=0, confirm_on_retry=False)
)
out["retry_exhausted"] = error(
    lambda: util.retry_with_confirmation(flaky(9), 1, max_retries=2, retry_delay=0,
                                         confirm_on_retry=False)
)  # fmt: skip
host = Host(["yes", "n"])
util.set_cli_instance(host)
out["retry_declined"] = error(
    lambda: util.retry_with_confirmation(flaky(9), 1, retry_delay=0, confirmation_prompt="Again?")
)
out["asked"] = host.ui.asked


async def async_flaky(x):
    async_calls.append(x)
    if len(async_calls) < 3:
        raise ValueError("not yet")
    return x * 2


async_calls: list = []
host = Host(["y", "Y"])
util.set_cli_instance(host)
out["async_retry"] = asyncio.run(util.retry_with_confirmation_async(async_flaky, 21,
                                                                    retry_delay=0))  # fmt: skip
out["async_asked"] = host.ui.asked
util.set_cli_instance(None)

out["drop_none"] = util.drop_none(a=1, b=None, c=0, d="")
util.configure_timezone("Asia/Tokyo")
out["tz"] = util.format_datetime(datetime(2024, 1, 2, 3, 4, tzinfo=UTC))
out["tz_fmt"] = util.format_datetime(datetime(2024, 1, 2, 3, 4, tzinfo=UTC), "%H:%M %Z")
util.configure_timezone(None)
out["user_agent"] = util.get_app_user_agent()
request = util.url_request("http://example.invalid/x", data=b"1", headers={"X-A": "b"})
out["url_request"] = [request.full_url, request.get_method(), sorted(request.header_items())]
os.environ["CLIVER_CONF_DIR"] = str(work / "conf")
out["config_dir"] = str(util.get_config_dir()).replace(str(work), "<W>")

print(json.dumps(out, indent=1, default=str))
