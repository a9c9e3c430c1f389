"""The shopping cart's built-in tasks: 10 everyday, 2 long-horizon, 1 scaling rule.

References are plain Python over ``app.rows``; plays go through the tools (see :mod:`workbench.apps.tasks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.apps.base import TODAY, DemoApp
from workbench.apps.catalog import DAY, SCALING_SIZES, add_record, money
from workbench.apps.tasks import ForEach, Let, Play, Scan, Task

CATEGORIES = r"(?P<category>electronics|home|kitchen|outdoors|books|toys|beauty|office)"
COLORS = r"(?P<color>black|white|navy|sage|graphite|sand|coral|olive|slate|ivory)"
SAVED_FOR_LATER = r"saved[- ]for[- ]later"

SAVE_ARGS = {
    "product": "it['product']",
    "sku": "it['sku']",
    "category": "it['category']",
    "color": "it['color']",
    "unit_price": "it['unit_price']",
}
"""Arguments of ``create_saved_item`` for a cart item ``it``."""


def _lines(app: DemoApp) -> list[Any]:
    return list(app.rows["cart_items"].values())


def _save_for_later(app: DemoApp, item: Any) -> None:
    del app.rows["cart_items"][item.id]
    add_record(
        app,
        "saved_items",
        product=item.product,
        sku=item.sku,
        category=item.category,
        color=item.color,
        unit_price=item.unit_price,
        saved_on=TODAY.isoformat(),
    )


def _same(value: str, wanted: str) -> bool:
    return value.lower() == wanted.lower()


# -- references ----------------------------------------------------------------------------------


def _remove_expensive(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if item.unit_price > p["threshold"]:
            del app.rows["cart_items"][item.id]


def _cap_quantity(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if item.quantity > p["limit"]:
            item.quantity = p["limit"]


def _save_category(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if _same(item.category, p["category"]):
            _save_for_later(app, item)


def _wrap_category(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if _same(item.category, p["category"]):
            item.gift_wrap = True


def _restore_saved(app: DemoApp, p: Mapping[str, Any]) -> None:
    for saved in list(app.rows["saved_items"].values()):
        if saved.unit_price < p["price"]:
            del app.rows["saved_items"][saved.id]
            add_record(
                app,
                "cart_items",
                product=saved.product,
                sku=saved.sku,
                category=saved.category,
                color=saved.color,
                unit_price=saved.unit_price,
                quantity=1,
                gift_wrap=False,
                added_on=TODAY.isoformat(),
            )


def _remove_color(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if _same(item.color, p["color"]):
            del app.rows["cart_items"][item.id]


def _one_more(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if _same(item.category, p["category"]) and item.quantity < 99:
            item.quantity += 1


def _clear_old(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if item.added_on < p["day"]:
            del app.rows["cart_items"][item.id]


def _prune_saved(app: DemoApp, p: Mapping[str, Any]) -> None:
    for saved in list(app.rows["saved_items"].values()):
        if saved.saved_on < p["day"]:
            del app.rows["saved_items"][saved.id]


def _trim_category(app: DemoApp, p: Mapping[str, Any]) -> None:
    chosen = [item for item in _lines(app) if _same(item.category, p["category"])]
    chosen.sort(key=lambda item: (-item.unit_price, item.id))
    for item in chosen[p["limit"] :]:
        _save_for_later(app, item)


def _merge_duplicates(app: DemoApp, p: Mapping[str, Any]) -> None:
    first: dict[str, Any] = {}
    for item in _lines(app):
        kept = first.setdefault(item.product, item)
        if kept is not item:
            kept.quantity = min(99, kept.quantity + item.quantity)
            del app.rows["cart_items"][item.id]


def _stale_to_saved(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if item.added_on < p["day"]:
            _save_for_later(app, item)


def _wrap_pricey(app: DemoApp, p: Mapping[str, Any]) -> None:
    for item in _lines(app):
        if item.unit_price > p["price"]:
            item.gift_wrap = True


# -- the catalog ---------------------------------------------------------------------------------

TASKS = [
    Task(
        app="cart",
        slug="remove-expensive",
        tier="everyday",
        prompt="Remove everything in the cart that costs more than ${threshold:g} apiece.",
        defaults={"threshold": 50.0},
        patterns=(
            r"(?:remove|delete|drop)\b.*?\b(?:costs?|priced|price)\b.*?\b(?:more than|over|above) "
            r"\$?(?P<threshold>\d[\d,]*(?:\.\d+)?)",
        ),
        items=122,
        expected=_remove_expensive,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                Let("targets", "[it for it in items if it['unit_price'] > threshold]"),
                ForEach("delete_cart_item", "targets", {"item_id": "it['id']"}, into="removed"),
            ),
            report={"removed": "len(removed)", "remaining": "len(items) - len(removed)"},
            answer="Removed {removed} items that cost more than ${threshold:g} apiece; {remaining} items remain.",
        ),
    ),
    Task(
        app="cart",
        slug="cap-quantity",
        tier="everyday",
        prompt="No cart line should have more than {limit} units: lower every quantity above {limit} to {limit}.",
        defaults={"limit": 2},
        patterns=(
            r"more than (?P<limit>\d+) units",
            r"(?:cap|limit) (?:every |each |all )?.*?(?:quantit\w+|units) (?:at|to) (?P<limit>\d+)",
        ),
        items=60,
        expected=_cap_quantity,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "update_cart_item",
                    "[it for it in items if it['quantity'] > limit]",
                    {"item_id": "it['id']", "quantity": "limit"},
                    into="lowered",
                ),
            ),
            report={"lowered": "len(lowered)"},
            answer="Lowered the quantity of {lowered} cart lines to {limit}.",
        ),
    ),
    Task(
        app="cart",
        slug="save-category",
        tier="everyday",
        prompt="Move every {category} item in my cart to my saved-for-later list.",
        defaults={"category": "Electronics"},
        patterns=(rf"\bmove (?:every|all)(?: the| my)? {CATEGORIES} (?:items?|products?)\b.*?\b{SAVED_FOR_LATER}",),
        items=30,
        expected=_save_category,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                Let("targets", "[it for it in items if it['category'].lower() == category.lower()]"),
                ForEach("create_saved_item", "targets", SAVE_ARGS, into="saved"),
                ForEach("delete_cart_item", "targets", {"item_id": "it['id']"}, into="removed"),
            ),
            report={"moved": "len(removed)"},
            answer="Moved {moved} {category} items from your cart to your saved-for-later list.",
        ),
    ),
    Task(
        app="cart",
        slug="wrap-category",
        tier="everyday",
        prompt="Gift-wrap everything in the {category} category.",
        defaults={"category": "Books"},
        patterns=(
            rf"\bgift[- ]?wrap\b.*?\b(?:in|from) the {CATEGORIES} category",
            rf"\bgift[- ]?wrap (?:every|all)(?: the| my)? {CATEGORIES}\b",
        ),
        items=120,
        expected=_wrap_category,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "update_cart_item",
                    "[it for it in items if it['category'].lower() == category.lower() and not it['gift_wrap']]",
                    {"item_id": "it['id']", "gift_wrap": "True"},
                    into="wrapped",
                ),
            ),
            report={"wrapped": "len(wrapped)"},
            answer="Turned on gift wrapping for {wrapped} items in the {category} category.",
        ),
    ),
    Task(
        app="cart",
        slug="restore-saved",
        tier="everyday",
        prompt="Move every saved-for-later item under ${price:g} back into my cart, one of each.",
        defaults={"price": 60.0},
        patterns=(
            rf"\b{SAVED_FOR_LATER}\b.*?\b(?:under|below|less than|cheaper than) {money('price')}.*?\bback "
            r"(?:in|into|to)\b",
            rf"\bmove\b.*?\b(?:under|below|less than|cheaper than) {money('price')}.*?\bback (?:in|into|to) "
            r"(?:my |the )?cart",
        ),
        items=150,
        expected=_restore_saved,
        play=Play(
            steps=(
                Scan("list_saved_items", "saved"),
                Let("targets", "[it for it in saved if it['unit_price'] < price]"),
                ForEach("create_cart_item", "targets", {**SAVE_ARGS, "quantity": "1"}, into="added"),
                ForEach("delete_saved_item", "targets", {"saved_id": "it['id']"}, into="removed"),
            ),
            report={"moved": "len(added)", "still_saved": "len(saved) - len(removed)"},
            answer=(
                "Moved {moved} saved items under ${price:g} back into your cart (one of each); "
                "{still_saved} items stay saved for later."
            ),
        ),
    ),
    Task(
        app="cart",
        slug="remove-color",
        tier="everyday",
        prompt="Take every {color} item out of my cart.",
        defaults={"color": "Coral"},
        patterns=(rf"\b(?:take|remove|delete|drop) (?:every|all)(?: the| my)? {COLORS}\b",),
        items=100,
        expected=_remove_color,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "delete_cart_item",
                    "[it for it in items if it['color'].lower() == color.lower()]",
                    {"item_id": "it['id']"},
                    into="removed",
                ),
            ),
            report={"removed": "len(removed)"},
            answer="Took {removed} {color} items out of your cart.",
        ),
    ),
    Task(
        app="cart",
        slug="one-more",
        tier="everyday",
        prompt="I need one more of every {category} item in my cart: add 1 to each of their quantities.",
        defaults={"category": "Outdoors"},
        patterns=(
            rf"\b(?:one|1) more (?:unit )?of (?:every|each|all)(?: the| my)? {CATEGORIES}\b",
            rf"\badd (?:one|1) to\b.*?\bquantit\w+ of (?:every|each|all)(?: the| my)? {CATEGORIES}\b",
        ),
        items=60,
        expected=_one_more,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "update_cart_item",
                    "[it for it in items if it['category'].lower() == category.lower() and it['quantity'] < 99]",
                    {"item_id": "it['id']", "quantity": "it['quantity'] + 1"},
                    into="raised",
                ),
            ),
            report={"raised": "len(raised)", "units": "sum(it['quantity'] for it in raised)"},
            answer="Added one more unit to {raised} {category} lines; they now come to {units} units.",
        ),
    ),
    Task(
        app="cart",
        slug="clear-old",
        tier="everyday",
        prompt="Remove everything I added to my cart before {day}.",
        defaults={"day": "2026-03-15"},
        patterns=(rf"\b(?:remove|delete|clear|drop)\b.*?\badded\b.*?\bbefore (?P<day>{DAY})",),
        items=80,
        expected=_clear_old,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "delete_cart_item",
                    "[it for it in items if it['added_on'] < day]",
                    {"item_id": "it['id']"},
                    into="removed",
                ),
            ),
            report={"removed": "len(removed)", "remaining": "len(items) - len(removed)"},
            answer="Removed {removed} items added before {day}; {remaining} items remain in your cart.",
        ),
    ),
    Task(
        app="cart",
        slug="prune-saved",
        tier="everyday",
        prompt="Delete every saved-for-later item I saved before {day}.",
        defaults={"day": "2026-04-01"},
        patterns=(rf"\b(?:delete|remove|clear)\b.*?\b{SAVED_FOR_LATER}\b.*?\bsaved before (?P<day>{DAY})",),
        items=300,
        expected=_prune_saved,
        play=Play(
            steps=(
                Scan("list_saved_items", "saved"),
                ForEach(
                    "delete_saved_item",
                    "[it for it in saved if it['saved_on'] < day]",
                    {"saved_id": "it['id']"},
                    into="removed",
                ),
            ),
            report={"removed": "len(removed)", "kept": "len(saved) - len(removed)"},
            answer="Deleted {removed} items saved before {day}; {kept} items are still saved for later.",
        ),
    ),
    Task(
        app="cart",
        slug="trim-category",
        tier="everyday",
        prompt=(
            "Keep only the {limit} most expensive {category} items in my cart and move the other {category} "
            "items to saved for later."
        ),
        defaults={"limit": 5, "category": "Electronics"},
        patterns=(rf"\bkeep (?:only )?(?:the )?(?P<limit>\d+) most expensive {CATEGORIES}\b.*?\b{SAVED_FOR_LATER}",),
        items=50,
        expected=_trim_category,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                Let(
                    "ranked",
                    "sorted([it for it in items if it['category'].lower() == category.lower()],"
                    " key=lambda it: (-it['unit_price'], it['id']))",
                ),
                Let("extra", "ranked[limit:]"),
                ForEach("create_saved_item", "extra", SAVE_ARGS, into="saved"),
                ForEach("delete_cart_item", "extra", {"item_id": "it['id']"}, into="removed"),
            ),
            report={"moved": "len(removed)", "kept": "len(ranked) - len(removed)"},
            answer="Kept the {kept} most expensive {category} items and moved {moved} others to saved for later.",
        ),
    ),
    # -- long-horizon --
    Task(
        app="cart",
        slug="merge-duplicates",
        tier="long",
        prompt=(
            "My cart has the same product on several lines. Merge them: keep the first line of each product (in "
            "cart order) with the combined quantity, at most 99, and remove the other lines."
        ),
        patterns=(r"\bsame product on (?:several|many|multiple) lines\b.*?\bmerge\b",),
        items=60,
        expected=_merge_duplicates,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                Let("first_line", "{it['product']: it['id'] for it in reversed(items)}"),
                Let(
                    "totals",
                    "{name: min(99, sum(it['quantity'] for it in items if it['product'] == name))"
                    " for name in first_line}",
                ),
                ForEach(
                    "update_cart_item",
                    "[it for it in items if first_line[it['product']] == it['id']"
                    " and totals[it['product']] != it['quantity']]",
                    {"item_id": "it['id']", "quantity": "totals[it['product']]"},
                    into="merged",
                ),
                ForEach(
                    "delete_cart_item",
                    "[it for it in items if first_line[it['product']] != it['id']]",
                    {"item_id": "it['id']"},
                    into="removed",
                ),
            ),
            report={"merged": "len(merged)", "removed": "len(removed)", "lines": "len(first_line)"},
            answer=(
                "Merged duplicates into {merged} lines and removed {removed} extra lines; the cart has {lines} lines."
            ),
        ),
    ),
    Task(
        app="cart",
        slug="stale-to-saved",
        tier="long",
        prompt="Move every cart item I added before {day} to my saved-for-later list.",
        defaults={"day": "2026-04-15"},
        patterns=(rf"\bmove\b.*?\badded before (?P<day>{DAY})\b.*?\b{SAVED_FOR_LATER}",),
        items=400,
        expected=_stale_to_saved,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                Let("targets", "[it for it in items if it['added_on'] < day]"),
                ForEach("create_saved_item", "targets", SAVE_ARGS, into="saved"),
                ForEach("delete_cart_item", "targets", {"item_id": "it['id']"}, into="removed"),
            ),
            report={"moved": "len(removed)", "remaining": "len(items) - len(removed)"},
            answer="Moved {moved} items added before {day} to saved for later; {remaining} items stay in the cart.",
        ),
    ),
    # -- scaling --
    Task(
        app="cart",
        slug="wrap-pricey",
        tier="scaling",
        prompt="Gift-wrap every item in my cart that costs more than ${price:g}.",
        defaults={"price": 30.0},
        patterns=(
            rf"\bgift[- ]?wrap (?:every|each|all)(?: the)? items?\b.*?\b(?:more than|over|above) {money('price')}",
        ),
        items=50,
        sizes=SCALING_SIZES,
        expected=_wrap_pricey,
        play=Play(
            steps=(
                Scan("list_cart_items", "items"),
                ForEach(
                    "update_cart_item",
                    "[it for it in items if it['unit_price'] > price and not it['gift_wrap']]",
                    {"item_id": "it['id']", "gift_wrap": "True"},
                    into="wrapped",
                ),
            ),
            report={"wrapped": "len(wrapped)"},
            answer="Turned on gift wrapping for {wrapped} items that cost more than ${price:g}.",
        ),
    ),
]
