"""The App field's "MCP server…" / "Toolset…" entries: type an app of your own, run every arm on it, find it
again among the recent ones (real MCP servers over stdio, no mocks)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea
from textual.widgets._select import SelectCurrent

from tests.support.tui_helpers import run_to_end, steady_frame, wait_for
from workbench.locations import recent_apps_file
from workbench.sources.typed import TypedApp, recent_apps, remember_app
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.own_app import OwnAppScreen
from workbench.tui.widgets.run_form import NEW_MCP, NEW_TOOLSET, OWN_APP, RECENT_APP

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

PROMPT = "Remove everything in the cart that costs more than $50 apiece."
CART_SERVER = f"{sys.executable} -m workbench serve-app cart --items 122"
NOTES_SERVER = Path(__file__).parents[1] / "mcp_servers" / "notes_server.py"
SMALL = (80, 24)
WIDE = (140, 45)

Snap = Callable[..., bool]


async def open_dialog(pilot: Pilot, entry: str) -> OwnAppScreen:
    await pilot.app.workers.wait_for_complete()  # the recent apps are offered (the field's options set)
    await pilot.pause()
    pilot.app.screen.query_one("#app", Select).value = entry
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, OwnAppScreen), what="the dialog")
    dialog = pilot.app.screen
    assert isinstance(dialog, OwnAppScreen)
    await pilot.pause()  # laid out (a click needs the button's place)
    return dialog


def message_of(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)  # type: ignore[attr-defined]


async def test_a_typed_mcp_server_runs_on_every_arm_and_is_offered_again(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=WIDE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        field = screen.query_one("#app", Select)
        dialog = await open_dialog(pilot, NEW_MCP)
        assert field.value == "cart"  # the field shows what is in use until the dialog gives it an app
        dialog.query_one("#target", Input).value = CART_SERVER
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert field.value == OWN_APP
        assert "mcp:workbench" in message_of(screen, "#form-message")  # until the server has said its name
        await pilot.click("#prompt")
        await pilot.press(*PROMPT, "ctrl+r")
        await run_to_end(pilot, screen, timeout_s=120)
        for pane in screen.panes.values():
            assert pane.summary.status == "completed"
            assert pane.summary.diff == {"created": 0, "updated": 0, "deleted": 35}
            assert (pane.summary.verdict, pane.summary.passed) == ("agree", None)  # agreement is no pass
        assert screen.last_comparison is not None and screen.last_comparison.app == "mcp:cart"
        await wait_for(pilot, lambda: recent_apps() == [TypedApp("mcp", CART_SERVER, label="mcp:cart")],
                       what="the app remembered under the name the server gave")  # fmt: skip
        await wait_for(pilot, lambda: "mcp:cart" in str(field.query_one(SelectCurrent).query_one(Static).content),
                       what="the field showing the name the server gave")  # fmt: skip

    again = make_app(store=store)
    async with again.run_test(size=WIDE) as pilot:
        screen = again.screen
        assert isinstance(screen, CompareScreen)
        field = screen.query_one("#app", Select)
        await wait_for(pilot, lambda: screen.own_apps.offered != [], what="the recent apps")
        labels = [str(label) for label, _ in field._options]
        assert labels[0] == "cart · recent MCP"
        assert labels[-2:] == ["MCP server…", "Toolset…"]
        field.value = f"{RECENT_APP}0"
        await wait_for(pilot, lambda: field.value == OWN_APP, what="the recent app chosen without a dialog")
        assert screen.own_apps.source is not None and screen.own_apps.source.servers[0].target == CART_SERVER
        assert str(field._options[0][0]) == "mcp:cart · your tools"
        assert screen.own_apps.offered == []  # the one in use is not offered twice


async def test_a_server_that_cannot_start_says_why_in_the_form(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SMALL) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        dialog = await open_dialog(pilot, NEW_MCP)
        dialog.query_one("#target", Input).value = f"{sys.executable} {NOTES_SERVER} --fail-start"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        screen.query_one("#prompt", TextArea).text = "Add a note"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: not screen.running and "did not start" in message_of(screen, "#form-message"),
                       timeout_s=60, what="the failure in the form")  # fmt: skip
        message = message_of(screen, "#form-message")
        assert message.startswith("The app did not start (nothing stored): notes: cannot open the database")
        assert "\n" not in message
        assert store.count_sessions() == 0
        assert recent_apps() == []  # it never opened: not offered again
        assert app.is_running


async def test_what_the_command_line_refuses_is_said_in_the_dialog(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SMALL) as pilot:
        screen = app.screen
        dialog = await open_dialog(pilot, NEW_MCP)
        dialog.query_one("#target", Input).value = '"unterminated'
        await pilot.press("enter")
        await wait_for(pilot, lambda: "No closing quotation" in message_of(dialog, "#own-message"))
        assert dialog.query_one("#own-message").has_class("-error")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert screen.query_one("#app", Select).value == "cart"
        assert isinstance(screen, CompareScreen) and screen.own_apps.source is None

        dialog = await open_dialog(pilot, NEW_TOOLSET)
        dialog.query_one("#target", Input).value = "no_such_module_here:tools"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "cannot import no_such_module_here" in message_of(dialog, "#own-message"))
        dialog.query_one("#target", Input).value = "json:__name__"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "expected a pydantic-ai toolset" in message_of(dialog, "#own-message"))


async def test_a_toolset_typed_in_the_dialog_is_the_app(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(NOTES_SERVER.parent))
    app = make_app(store=store)
    async with app.run_test(size=SMALL) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        dialog = await open_dialog(pilot, NEW_TOOLSET)
        dialog.query_one("#target", Input).value = "py_toolset:TOOLS"
        await pilot.click("#use")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert screen.query_one("#app", Select).value == OWN_APP
        assert screen.own_apps.source is not None and screen.own_apps.source.label == "toolset:TOOLS"


async def test_a_recent_server_asks_again_for_a_header_value_it_did_not_keep(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_app(TypedApp("mcp", "http://127.0.0.1:9/mcp", ("Authorization: Bearer s3cret",)))
    assert "s3cret" not in recent_apps_file().read_text()
    monkeypatch.setenv("NOTES_TOKEN", "t0ken")
    app = make_app(store=store)
    async with app.run_test(size=SMALL) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: screen.own_apps.offered != [], what="the recent apps")
        dialog = await open_dialog(pilot, f"{RECENT_APP}0")
        assert "Type the value of Authorization" in message_of(dialog, "#own-message")
        headers = dialog.query_one("#headers", Input)
        assert headers.has_focus and headers.value == "Authorization:"
        await pilot.press("end", *" Bearer $NOTES_TOKEN", "enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        source = screen.own_apps.source
        assert source is not None and dict(source.headers) == {"Authorization": "Bearer t0ken"}


def _recent_servers() -> None:
    remember_app(TypedApp("toolset", "inventory_tools:make", workdir="/srv/inventory"))
    remember_app(TypedApp("mcp", "http://127.0.0.1:9/mcp", ("Authorization: Bearer s3cret",)))
    remember_app(TypedApp("mcp", "uvx mcp-server-sqlite --db-path {workdir}/shop.db", workdir="/srv/shop"))


def test_app_field_with_recent_apps_wide(snap_compare: Snap) -> None:
    _recent_servers()

    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).cursor_blink = False
        await wait_for(pilot, lambda: len(screen.own_apps.offered) == 3, what="the recent apps")
        await pilot.click("#app")
        await steady_frame(pilot)

    assert snap_compare(make_app(store=None), terminal_size=WIDE, run_before=run_before)


def test_mcp_dialog_asking_for_a_header_value_80x24(snap_compare: Snap) -> None:
    _recent_servers()

    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: len(screen.own_apps.offered) == 3, what="the recent apps")
        await open_dialog(pilot, f"{RECENT_APP}1")
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await steady_frame(pilot)

    assert snap_compare(make_app(store=None), terminal_size=SMALL, run_before=run_before)


def test_mcp_dialog_with_an_error_wide(snap_compare: Snap) -> None:
    async def run_before(pilot: Pilot) -> None:
        dialog = await open_dialog(pilot, NEW_MCP)
        target = dialog.query_one("#target", Input)
        target.cursor_blink = False
        target.value = "node server.js --db '{workdir}/app.db"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "No closing quotation" in message_of(dialog, "#own-message"))
        await steady_frame(pilot)

    assert snap_compare(make_app(store=None), terminal_size=WIDE, run_before=run_before)


def test_recent_list_file_is_json_a_person_can_read() -> None:
    _recent_servers()
    entries = json.loads(recent_apps_file().read_text())
    assert entries[0] == {"kind": "mcp", "target": "uvx mcp-server-sqlite --db-path {workdir}/shop.db",
                          "workdir": "/srv/shop"}  # fmt: skip
    assert entries[1]["headers"] == ["Authorization:"]


async def test_the_dialog_names_a_new_command_anew_and_ctrl_a_selects_the_field(store: Store) -> None:
    """A server's own name (learnt from its first run) stays with its command: edited into another command,
    the app is named from the new one; ctrl+a selects the whole field, as in the prompt (it was "home", and a
    newcomer's command was glued to the old one)."""
    app = make_app(store=store)
    async with app.run_test(size=WIDE) as pilot:
        known = TypedApp("mcp", f"{sys.executable} {NOTES_SERVER}", label="mcp:notes")
        dialog = OwnAppScreen("mcp", known)
        await app.push_screen(dialog)
        await pilot.pause()
        target = dialog.query_one("#target", Input)
        assert dialog.typed_now().label == "mcp:notes"  # the same command keeps its name
        target.focus()
        await pilot.press("ctrl+a", *"node index.js")
        assert target.value == "node index.js"
        assert dialog.typed_now().label == "" and dialog.typed_now().name == "index"


def test_an_npm_server_is_named_after_its_package_before_it_has_run() -> None:
    from workbench.sources.mcp import ServerSpec

    script = "/x/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    assert ServerSpec.parse(f"node {script} /data").short_name == "server-filesystem"
    assert ServerSpec.parse("npx -y @modelcontextprotocol/server-memory").short_name == "server-memory"
    assert ServerSpec.parse(f"{sys.executable} {NOTES_SERVER}").short_name == "notes_server"
