"""The compare screen's form: app, item count, model, built-in task, and the prompt."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static, TextArea

import workbench.apps as apps

MODEL_SUGGESTIONS = [
    "scripted",
    "scripted:paced",
    "openai:gpt-5-mini",
    "openai:gpt-5",
    "anthropic:claude-sonnet-4-5",
    "anthropic:claude-haiku-4-5",
    "google:gemini-2.5-flash",
    "ollama:qwen3",
    "openai-chat:",
]


@dataclass(frozen=True)
class FormValues:
    app: str
    items: str
    model: str
    prompt: str


MATCH_DELAY_S = 0.3
"""A typed prompt is matched against the built-in tasks once typing pauses this long."""
OWN_APP = "(own)"
"""The App field's value for the person's own tools (``workbench --mcp ...`` / ``--toolset ...``)."""
NEW_MCP = "+mcp"
NEW_TOOLSET = "+toolset"
RECENT_APP = "recent:"
"""The App field's value for a recent app of one's own is this and its index in the recent list."""
COMMANDS_OFF = "+off"
"""The App field's value, in a served workbench without ``--allow-commands``, of the entry that says why there
is no "MCP server…" or "Toolset…"."""
COMMANDS_OFF_LABEL = "MCP server / toolset: off here"
COMMANDS_OFF_MESSAGE = (
    "Your own MCP servers and toolsets are off in a served workbench: `workbench serve --allow-commands` enables them."
)


SUITE_APP = "bfcl"
"""The App field's value for BFCL v4 multi-turn: the Task field lists its entries (none until it is installed)."""
SUITE_MISSING = "BFCL is not installed here: run `workbench suites install bfcl`, then start the workbench again."


def app_options(own_app: str | None, recent: list[str], *, allow_commands: bool = True) -> list[tuple[str, str]]:
    """The App field: the person's own app (if chosen), the recent ones, the demo apps, BFCL, then the entries
    that ask for an MCP server or a toolset. Without ``allow_commands`` (a tab of ``workbench serve``) only the
    app ``serve`` was given and the demo apps: a recent app or a typed one would start a command or import
    code at a visitor's keystrokes."""
    own = [(f"{own_app} · your tools", OWN_APP)] if own_app else []
    demos = [(f"{app.name} · {app.title}", app.name) for app in apps.APPS.values()]
    demos.append(("bfcl · BFCL v4 multi-turn", SUITE_APP))
    if not allow_commands:
        return [*own, *demos, (COMMANDS_OFF_LABEL, COMMANDS_OFF)]
    recent_options = [(label, f"{RECENT_APP}{index}") for index, label in enumerate(recent)]
    return [*own, *recent_options, *demos, ("MCP server…", NEW_MCP), ("Toolset…", NEW_TOOLSET)]


def task_options(app: str) -> list[tuple[str, str]]:
    """The app's built-in tasks for the picker, with what each asks:
    ``remove-expensive · 122 items · Remove everything in the cart that costs more than $50 apiece.``
    For BFCL, its entries: ``multi_turn_base_0 · 4 turns · Move 'final_report.pdf' …``."""
    if app == SUITE_APP:
        return suite_entry_options()
    return [(f"{task.slug} · {task.items} items · {task.prompt_for()}", task.id) for task in apps.tasks_for(app)]


def suite_entry_options() -> list[tuple[str, str]]:
    from workbench.errors import UserError
    from workbench.suites import bfcl
    from workbench.suites.bfcl_source import entry_task_id

    try:
        entries = [entry for category in bfcl.CATEGORIES for entry in bfcl.load_entries(category)]
    except UserError:
        return []
    return [
        (f"{entry.id} · {len(entry.turns)} turns · {entry.user_messages(0)[0]['content']}", entry_task_id(entry))
        for entry in entries
    ]


def grade_note(app: str, prompt: str, items: str) -> str:
    """What grading a typed prompt assumes, when it is a built-in task (or a variation of one): the item count
    in the form, which may not be the task's own (its published figures are at the task's count)."""
    found = apps.match_task(app, prompt) if prompt.strip() else None
    if found is None:
        return ""
    task, _ = found
    count = items.strip() or "?"
    if count == str(task.items):
        return f"Built-in task {task.id}: graded on {count} items, as the task is."
    return (
        f"Built-in task {task.id}: graded on {count} items (the Items field); the task itself runs on "
        f"{task.items}, so figures at {count} differ from its published ones."
    )


class PromptArea(TextArea):
    """The prompt field, with the keys of any text field: ctrl+a selects all (delete or typing then replaces it)."""

    BINDINGS = [
        Binding("ctrl+a", "select_all", "Select all", show=False, id="prompt.select_all", tooltip="Select the prompt"),
    ]


class RunForm(Vertical):
    """Fields for one comparison. The task picker lists the chosen app's tasks; a task fills the item count
    and the prompt."""

    @dataclass
    class OwnAppWanted(Message):
        """The App field's "MCP server…", "Toolset…" or a recent app was picked: the screen takes it from here."""

        value: str

    def __init__(
        self, *, model: str = "scripted", own_app: str | None = None, allow_commands: bool = True, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self._model = model
        self._allow_commands = allow_commands
        self._own_app = own_app
        """The label of the person's own app (``workbench --mcp ...``), offered first and chosen."""
        self.recent_models: list[str] = []
        """Models used lately (kept in the data directory across sessions), most recent first."""
        self._app = OWN_APP if own_app else apps.APP_NAMES[0]
        """The app the form was last set to: changing it resets the item count and the task list."""
        self._focus_back = False
        """Whether focus was in the form when a run started: it comes back to the prompt when the run ends."""
        self._match_timer: Timer | None = None
        self._showing_note = False
        self._error_for: FormValues | None = None
        """The values an error under the form is about: it stands until one of them changes."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="form-row"):
            yield Label("App", classes="field-label")
            yield Select(
                app_options(self._own_app, [], allow_commands=self._allow_commands),
                value=self._app,
                allow_blank=False,
                compact=True,
                id="app",
                tooltip="The app every arm works on, each on its own copy: a demo app, or an MCP server or "
                "toolset of your own",
            )
            yield Label("Items", classes="field-label")
            yield Input(
                str(apps.APPS[self._app].default_items) if self._app in apps.APPS else "",
                type="integer",
                compact=True,
                id="items",
                tooltip=f"Records to seed the app with ({apps.MIN_ITEMS}-{apps.MAX_ITEMS})",
            )
            yield Label("Model", classes="field-label")
            yield Input(
                self._model,
                compact=True,
                id="model",
                suggester=SuggestFromList(MODEL_SUGGESTIONS, case_sensitive=False),
                tooltip="scripted (offline), scripted:paced (offline, real-model latency) or provider:model; "
                "models run lately are suggested first (right arrow accepts)",
            )
            yield Label("Task", classes="field-label")
            yield Select(
                task_options(self._app),
                prompt="built-in task (optional)",
                compact=True,
                id="task",
                tooltip="A built-in task of this app fills the item count and the prompt; it is graded",
            )
        yield PromptArea(
            id="prompt",
            soft_wrap=True,
            tab_behavior="focus",
            placeholder="Type a prompt or pick a built-in task — ctrl+r runs it on every arm",
        )
        yield Static(id="form-message")

    def on_mount(self) -> None:
        self.query_one("#prompt", TextArea).border_title = "Prompt"

    def values(self) -> FormValues:
        return FormValues(
            app=str(self.query_one("#app", Select).value),
            items=self.query_one("#items", Input).value.strip(),
            model=self.query_one("#model", Input).value.strip(),
            prompt=self.query_one("#prompt", TextArea).text,
        )

    def fill(self, *, app: str, items: int, model: str | None = None, prompt: str | None = None) -> None:
        self._set_app(app)
        self.query_one("#items", Input).value = str(items)
        if model is not None:
            self.query_one("#model", Input).value = model
        if prompt is not None:
            self.query_one("#prompt", TextArea).text = prompt

    def remember_models(self, models: list[str]) -> None:
        """Suggest these models (most recent first) before the usual ones as the model is typed."""
        usable = [model for model in models if model in ("scripted", "scripted:paced") or ":" in model]
        suggestions = list(dict.fromkeys([*usable, *self.recent_models, *MODEL_SUGGESTIONS]))
        self.recent_models = list(dict.fromkeys([*usable, *self.recent_models]))
        self.query_one("#model", Input).suggester = SuggestFromList(suggestions, case_sensitive=False)

    def offer_own_apps(self, own_app: str | None, recent: list[str], *, choose: bool = False) -> None:
        """Offer the person's own app (and ``choose`` it) and the recent ones (labels) in the App field."""
        self._own_app = own_app
        field = self.query_one("#app", Select)
        field.set_options(app_options(own_app, recent, allow_commands=self._allow_commands))
        if choose and own_app:
            self._set_app(OWN_APP)
            self.query_one("#items", Input).value = ""  # an app of one's own is not seeded
        else:
            self._set_app(self._app if own_app or self._app != OWN_APP else apps.APP_NAMES[0])
        field.mutate_reactive(Select.value)  # the same value under a new label is shown anew

    def suite_entry(self) -> str | None:
        """The BFCL entry picked in the Task field (``bfcl/multi_turn_base_0``), when the App is BFCL."""
        picked = self.query_one("#task", Select).value
        return str(picked) if self.values().app == SUITE_APP and picked is not Select.NULL else None

    def choose_task(self, task_id: str) -> None:
        """Pick a built-in task (of any app): the app, its tasks, the item count and the prompt follow."""
        self._set_app(apps.TASKS[task_id].app)
        self.query_one("#task", Select).value = task_id

    def selected_task(self) -> str | None:
        """The built-in task the form holds: the prompt matched against the app's tasks, else the Task field."""
        values = self.values()
        if values.app in (OWN_APP, SUITE_APP):
            return None
        found = apps.match_task(values.app, values.prompt) if values.prompt.strip() else None
        if found is not None:
            return found[0].id
        picked = self.query_one("#task", Select).value
        return None if picked is Select.NULL else str(picked)

    def show_message(self, message: str | Content, *, error: bool = False) -> None:
        """Show ``message`` under the form; a ``str`` is shown as written (it may quote what was typed, which a
        Static would otherwise read as markup: a model named "[/b]" must not break the screen)."""
        self._showing_note = False
        self._error_for = self.values() if error else None
        if self._match_timer is not None:  # a message shown now supersedes a note still waiting to be shown
            self._match_timer.stop()
        widget = self.query_one("#form-message", Static)
        widget.set_class(error, "-error")
        widget.update(Content(message) if isinstance(message, str) else message)

    def set_running(self, running: bool) -> None:
        if running:
            self._focus_back = self.has_focus_within
        for widget in self.query("Select, Input, TextArea"):
            widget.disabled = running
        if not running and self._focus_back:
            self.query_one("#prompt", TextArea).focus()

    def _set_app(self, app: str) -> None:
        if app != self._app:
            self._app = app
            self.query_one("#task", Select).set_options(task_options(app))
        self.query_one("#app", Select).value = app

    @on(Select.Changed, "#task")
    def _task_chosen(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            return
        if self._app == SUITE_APP:
            self._suite_entry_chosen(str(event.value))
            return
        task = apps.TASKS[str(event.value)]
        self.fill(app=task.app, items=task.items, prompt=task.prompt_for())
        self.show_message(
            Content.assemble(
                ("Task ", "$text-muted"), (task.id, "bold"), (f" ({task.tier}) — ctrl+r runs it", "$text-muted")
            )
        )
        self.query_one("#prompt", TextArea).focus()

    def _suite_entry_chosen(self, task_id: str) -> None:
        from workbench.suites import bfcl_plan

        task = bfcl_plan.suite_task(bfcl_plan.find_entry(task_id))
        self.query_one("#items", Input).value = ""
        self.query_one("#prompt", TextArea).text = "\n\n".join(task.turns)
        about = f": {len(task.turns)} turns, one after the other, graded by BFCL's checker — ctrl+r runs it"
        self.show_message(Content.assemble(("BFCL entry ", "$text-muted"), (task.id, "bold"), (about, "$text-muted")))
        self.query_one("#prompt", TextArea).focus()

    @on(TextArea.Changed, "#prompt")
    @on(Input.Changed, "#items")
    def _prompt_changed(self) -> None:
        """Say which item count the grade assumes once a typed prompt turns out to be a built-in task."""
        if self._match_timer is not None:
            self._match_timer.stop()
        self._match_timer = self.set_timer(MATCH_DELAY_S, self._match_prompt)

    def _match_prompt(self) -> None:
        self._match_timer = None
        if self.query_one("#prompt", TextArea).disabled:
            return  # a run is on: its own messages stand
        values = self.values()
        if values == self._error_for:
            return  # a change made before the error was shown (its event can arrive after it) keeps the error
        chosen = self.query_one("#task", Select).value
        if values.app == SUITE_APP:
            return  # an entry runs as BFCL wrote it; its message stands
        if chosen is not Select.NULL:
            task = apps.TASKS[str(chosen)]
            if task.prompt_for() == values.prompt and values.items == str(task.items):
                return  # the task as picked: the picker already said what runs
        note = grade_note(values.app, values.prompt, values.items)
        if note or self._showing_note:
            self.show_message(Content.styled(note, "$text-muted"))
            self._showing_note = bool(note)
        self._match_timer = None

    @on(Select.Changed, "#app")
    def _app_chosen(self, event: Select.Changed) -> None:
        """A person picked another app: its default item count, and its tasks in the picker."""
        if event.value is Select.NULL or event.value == self._app or event.value != event.select.value:
            return  # no change, or one already superseded (options reset, the field set back)
        if str(event.value).startswith(("+", RECENT_APP)):
            event.select.value = self._app  # until the screen has the app in hand (or it was cancelled)
            self.post_message(self.OwnAppWanted(str(event.value)))
            return
        self._set_app(str(event.value))
        if self._app in apps.APPS:
            self.query_one("#items", Input).value = str(apps.APPS[self._app].default_items)
        elif self._app == SUITE_APP:
            self.query_one("#items", Input).value = ""  # an entry brings its own state
            entries = len(self.query_one("#task", Select)._options) - 1  # less the blank
            self.show_message(f"Pick one of BFCL's {entries} entries in the Task field." if entries else SUITE_MISSING)
