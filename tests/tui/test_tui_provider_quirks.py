"""What real servers do, as the panes show it: a stream cut short mid-text, and estimated token counts."""

from __future__ import annotations

from tests.support.tui_helpers import settle
from workbench.events import ArmEvent, ProviderRetry, RequestStarted, RunFinished, RunStarted, TextDelta, Usage
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.blocks import Notice, TextBlock

SIZE = (140, 45)
CUT = "the stream ended before the model finished after 5 characters of text ('In my')"


async def test_the_text_of_a_cut_stream_stays_apart_and_the_answer_is_the_retry(store: Store) -> None:
    events = [
        ArmEvent("tool", 0, 0.0, RunStarted("tool", "openai-chat:m", "cart", 5, 0, "p", ["list_cart_items"])),
        ArmEvent("tool", 1, 0.1, RequestStarted(1)),
        ArmEvent("tool", 2, 0.2, TextDelta("In my")),
        ArmEvent("tool", 3, 0.3, ProviderRetry(1, 4, CUT, 0.5)),
        ArmEvent("tool", 4, 0.9, TextDelta("Nothing to remove.")),
        ArmEvent("tool", 5, 1.0, Usage(1, 900, 12, 0, 900, 12, None, None, estimated=True)),
        ArmEvent("tool", 6, 1.1, RunFinished("completed", None, "Nothing to remove.")),
    ]
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(events)
        await settle(pilot, screen)
        pane = screen.panes["tool"]
        blocks = pane.transcript.blocks
        texts = [block for block in blocks if isinstance(block, TextBlock)]
        assert [block.text for block in texts] == ["In my", "Nothing to remove."]
        assert [block.answer for block in texts] == [False, True]
        notice = next(block for block in blocks if isinstance(block, Notice))
        assert blocks.index(texts[0]) < blocks.index(notice) < blocks.index(texts[1])
        assert "the stream ended before the model finished" in notice.content.plain
        counters = str(pane.query_one("ArmCounters").render())
        assert "~900" in counters and "~12" in counters and "cost unknown" in counters
