"""The compare screen's form: app, item count, model, built-in task, and the prompt."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Select, Static, TextArea

import apps

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


def task_options(app: str) -> list[tuple[str, str]]:
    """The app's built-in tasks for the picker: ``remove-expensive · everyday · 122 items``."""
    return [(f"{task.slug} · {task.tier} · {task.items} items", task.id) for task in apps.tasks_for(app)]


class RunForm(Vertical):
    """Fields for one comparison. The task picker lists the chosen app's tasks; a task fills the item count
    and the prompt."""

    def __init__(self, *, model: str = "scripted", id: str | None = None) -> None:
        super().__init__(id=id)
        self._model = model
        self.recent_models: list[str] = []
        """Models used lately (kept in the data directory across sessions), most recent first."""
        self._app = next(iter(apps.APPS))
        """The app the form was last set to: changing it resets the item count and the task list."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="form-row"):
            yield Label("App", classes="field-label")
            yield Select(
                [(f"{app.name} · {app.title}", app.name) for app in apps.APPS.values()],
                value=self._app,
                allow_blank=False,
                compact=True,
                id="app",
                tooltip="The demo app both arms work on (each gets its own freshly seeded copy)",
            )
            yield Label("Items", classes="field-label")
            yield Input(
                str(apps.APPS[self._app].default_items),
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
        yield TextArea(
            id="prompt",
            soft_wrap=True,
            tab_behavior="focus",
            placeholder="Type a prompt for both arms, or pick a built-in task — ctrl+r runs the comparison",
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

    def choose_task(self, task_id: str) -> None:
        """Pick a built-in task (of any app): the app, its tasks, the item count and the prompt follow."""
        self._set_app(apps.TASKS[task_id].app)
        self.query_one("#task", Select).value = task_id

    def show_message(self, message: str | Content, *, error: bool = False) -> None:
        """Show ``message`` under the form; a ``str`` is shown as written (it may quote what was typed, which a
        Static would otherwise read as markup: a model named "[/b]" must not break the screen)."""
        widget = self.query_one("#form-message", Static)
        widget.set_class(error, "-error")
        widget.update(Content(message) if isinstance(message, str) else message)

    def set_running(self, running: bool) -> None:
        for widget in self.query("Select, Input, TextArea"):
            widget.disabled = running

    def _set_app(self, app: str) -> None:
        if app != self._app:
            self._app = app
            self.query_one("#task", Select).set_options(task_options(app))
        self.query_one("#app", Select).value = app

    @on(Select.Changed, "#task")
    def _task_chosen(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            return
        task = apps.TASKS[str(event.value)]
        self.fill(app=task.app, items=task.items, prompt=task.prompt_for())
        self.show_message(
            Content.assemble(
                ("Task ", "$text-muted"), (task.id, "bold"), (f" ({task.tier}) — ctrl+r runs it", "$text-muted")
            )
        )
        self.query_one("#prompt", TextArea).focus()

    @on(Select.Changed, "#app")
    def _app_chosen(self, event: Select.Changed) -> None:
        """A person picked another app: its default item count, and its tasks in the picker."""
        if event.value is Select.NULL or event.value == self._app:
            return
        self._set_app(str(event.value))
        self.query_one("#items", Input).value = str(apps.APPS[self._app].default_items)
