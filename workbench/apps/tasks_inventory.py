"""The warehouse inventory's built-in tasks: 10 everyday, 3 long-horizon, 1 scaling rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.apps.base import TODAY, DemoApp
from workbench.apps.catalog import DAY, SCALING_SIZES, add_record
from workbench.apps.tasks import ForEach, Let, Play, Scan, Task

CATEGORIES = r"(?P<category>hardware|electrical|packaging|cleaning|safety|office)"
SUPPLIER = r"[\w&'. -]+?"


WAREHOUSE_NAMED = (
    "'North' if {0}.lower() == 'north' else 'South' if {0}.lower() == 'south'"
    " else 'East' if {0}.lower() == 'east' else 'West'"
)
"""The warehouse named by a parameter, as one of the literal names the tools accept (for the type check)."""


def _warehouse(group: str) -> str:
    return rf"(?P<{group}>north|south|east|west)"


def _products(app: DemoApp) -> list[Any]:
    return list(app.rows["products"].values())


def _orders(app: DemoApp) -> list[Any]:
    return list(app.rows["purchase_orders"].values())


def _same(value: str, wanted: str) -> bool:
    return value.lower() == wanted.lower()


def _draft_order(app: DemoApp, product: Any, quantity: int) -> None:
    add_record(
        app,
        "purchase_orders",
        sku=product.sku,
        quantity=quantity,
        supplier=product.supplier,
        status="draft",
        created_on=TODAY.isoformat(),
    )


def _receive_sent(app: DemoApp) -> None:
    by_sku = {product.sku: product for product in _products(app)}
    for order in _orders(app):
        if order.status == "sent":
            order.status = "received"
            by_sku[order.sku].stock += order.quantity


# -- references ----------------------------------------------------------------------------------


def _reorder_low_stock(app: DemoApp, p: Mapping[str, Any]) -> None:
    open_skus = {order.sku for order in _orders(app) if order.status in ("draft", "sent")}
    for product in _products(app):
        if product.discontinued or product.stock >= product.reorder_level or product.sku in open_skus:
            continue
        _draft_order(app, product, p["quantity"])


def _discontinue_low(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.supplier, p["supplier"]) and product.stock < p["threshold"]:
            product.discontinued = True


def _move_warehouse(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.category, p["category"]) and _same(product.warehouse, p["source"]):
            product.warehouse = p["target"].title()


def _switch_supplier(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.supplier, p["old"]):
            product.supplier = p["new"]


def _raise_reorder(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.category, p["category"]) and product.reorder_level < p["level"]:
            product.reorder_level = p["level"]


def _send_drafts(app: DemoApp, p: Mapping[str, Any]) -> None:
    for order in _orders(app):
        if order.status == "draft" and order.created_on <= p["day"]:
            order.status = "sent"


def _drop_unneeded(app: DemoApp, p: Mapping[str, Any]) -> None:
    unneeded = {
        product.sku for product in _products(app) if product.discontinued or product.stock >= 2 * product.reorder_level
    }
    for order in _orders(app):
        if order.status == "draft" and order.sku in unneeded:
            del app.rows["purchase_orders"][order.id]


def _receive(app: DemoApp, p: Mapping[str, Any]) -> None:
    _receive_sent(app)


def _write_off(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if product.discontinued and product.stock > 0:
            product.stock = 0


def _new_cost(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.name, p["name"]) and product.unit_cost != p["cost"]:
            product.unit_cost = p["cost"]


def _close_warehouse(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if _same(product.warehouse, p["source"]):
            product.warehouse = p["target"].title()
            if product.stock == 0:
                product.discontinued = True


def _reconcile(app: DemoApp, p: Mapping[str, Any]) -> None:
    _receive_sent(app)
    _reorder_low_stock(app, p)


def _supplier_exit(app: DemoApp, p: Mapping[str, Any]) -> None:
    _switch_supplier(app, p)
    by_sku = {product.sku: product for product in _products(app)}
    for order in _orders(app):
        if order.status == "draft" and _same(order.supplier, p["old"]):
            del app.rows["purchase_orders"][order.id]
            if not by_sku[order.sku].discontinued:
                _draft_order(app, by_sku[order.sku], order.quantity)


def _reorder_floor(app: DemoApp, p: Mapping[str, Any]) -> None:
    for product in _products(app):
        if product.reorder_level < p["level"]:
            product.reorder_level = p["level"]


# -- the catalog ---------------------------------------------------------------------------------

RECEIVE_STEPS = (
    Let("sent", "[po for po in orders if po['status'] == 'sent']"),
    Let(
        "arriving",
        "{sku: sum(po['quantity'] for po in sent if po['sku'] == sku) for sku in [po['sku'] for po in sent]}",
    ),
    ForEach(
        "update_purchase_order", "sent", {"purchase_order_id": "it['id']", "status": "'received'"}, into="received"
    ),
    ForEach(
        "update_product",
        "[it for it in products if it['sku'] in arriving]",
        {"product_id": "it['id']", "stock": "it['stock'] + arriving[it['sku']]"},
        into="restocked",
    ),
)
"""Mark every sent order received and add what arrived to each product's stock (needs ``products``, ``orders``)."""

TASKS = [
    Task(
        app="inventory",
        slug="reorder-low-stock",
        tier="everyday",
        prompt=(
            "Create a draft purchase order for {quantity} units of every product that is below its reorder level "
            "and not discontinued, unless it already has an open (draft or sent) purchase order."
        ),
        defaults={"quantity": 200},
        patterns=(
            r"\b(?:create|raise|place|open|draft)\b.*?\bpurchase orders?\b.*?\b(?P<quantity>\d[\d,]*) units\b"
            r".*?\breorder (?:level|point)",
            r"\b(?:reorder|restock)\b.*?\b(?P<quantity>\d[\d,]*) units\b.*?\bbelow\b.*?\breorder (?:level|point)",
        ),
        items=120,
        expected=_reorder_low_stock,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                Scan("list_purchase_orders", "orders"),
                Let("open_skus", "[po['sku'] for po in orders if po['status'] != 'received']"),
                Let("low", "[it for it in products if not it['discontinued'] and it['stock'] < it['reorder_level']]"),
                ForEach(
                    "create_purchase_order",
                    "[it for it in low if it['sku'] not in open_skus]",
                    {"sku": "it['sku']", "quantity": "quantity"},
                    into="created",
                ),
            ),
            report={"created": "len(created)", "already_open": "len(low) - len(created)"},
            answer=(
                "Created {created} draft purchase orders for {quantity} units each; "
                "{already_open} other low-stock products already had an open order."
            ),
        ),
    ),
    Task(
        app="inventory",
        slug="discontinue-low",
        tier="everyday",
        prompt="Discontinue every product from {supplier} that has fewer than {threshold} units in stock.",
        defaults={"supplier": "Northwind Traders", "threshold": 50},
        patterns=(
            r"\bdiscontinue\b.*?\b(?:from|supplied by|by) (?P<supplier>[\w&'. -]+?),? (?:that|which|with)\b.*?"
            r"\b(?:fewer|less) than (?P<threshold>\d[\d,]*)",
            r"\bdiscontinue\b.*?\b(?:fewer|less) than (?P<threshold>\d[\d,]*) units\b.*?\b(?:from|supplied by|by) "
            r"(?P<supplier>[\w&'. -]+?)[.!]?$",
        ),
        items=120,
        expected=_discontinue_low,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if not it['discontinued'] and it['supplier'].lower() == supplier.lower()"
                    " and it['stock'] < threshold]",
                    {"product_id": "it['id']", "discontinued": "True"},
                    into="discontinued",
                ),
            ),
            report={"discontinued": "len(discontinued)"},
            answer="Discontinued {discontinued} products from {supplier} with fewer than {threshold} units in stock.",
        ),
    ),
    Task(
        app="inventory",
        slug="move-warehouse",
        tier="everyday",
        prompt="Move every {category} product from the {source} warehouse to the {target} warehouse.",
        defaults={"category": "Hardware", "source": "East", "target": "West"},
        patterns=(
            rf"\bmove (?:every|all|each)(?: the)? {CATEGORIES} products? from (?:the )?{_warehouse('source')} "
            rf"warehouse to (?:the )?{_warehouse('target')}\b",
        ),
        items=150,
        expected=_move_warehouse,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['category'].lower() == category.lower()"
                    " and it['warehouse'].lower() == source.lower()]",
                    {"product_id": "it['id']", "warehouse": WAREHOUSE_NAMED.format("target")},
                    into="moved",
                ),
            ),
            report={"moved": "len(moved)"},
            answer="Moved {moved} {category} products from the {source} warehouse to the {target} warehouse.",
        ),
    ),
    Task(
        app="inventory",
        slug="switch-supplier",
        tier="everyday",
        prompt="Switch every product supplied by {old} to {new}.",
        defaults={"old": "Summit Parts", "new": "Acme Supply Co"},
        patterns=(
            rf"\bswitch (?:every|all|each)(?: the)? products? (?:supplied by|from) (?P<old>{SUPPLIER}) to "
            rf"(?P<new>{SUPPLIER})[.!]?$",
        ),
        items=80,
        expected=_switch_supplier,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['supplier'].lower() == old.lower()]",
                    {"product_id": "it['id']", "supplier": "new"},
                    into="switched",
                ),
            ),
            report={"switched": "len(switched)"},
            answer="Switched {switched} products from {old} to {new}.",
        ),
    ),
    Task(
        app="inventory",
        slug="raise-reorder-level",
        tier="everyday",
        prompt="Raise the reorder level of every {category} product that is below {level} to {level}.",
        defaults={"category": "Safety", "level": 50},
        patterns=(
            rf"\braise the reorder level of (?:every|each|all)(?: the)? {CATEGORIES} products?\b.*?\bbelow "
            r"(?P<level>\d[\d,]*)\b",
        ),
        items=150,
        expected=_raise_reorder,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['category'].lower() == category.lower()"
                    " and it['reorder_level'] < level]",
                    {"product_id": "it['id']", "reorder_level": "level"},
                    into="raised",
                ),
            ),
            report={"raised": "len(raised)"},
            answer="Raised the reorder level of {raised} {category} products to {level}.",
        ),
    ),
    Task(
        app="inventory",
        slug="send-drafts",
        tier="everyday",
        prompt="Send every draft purchase order that was created on or before {day}.",
        defaults={"day": "2026-05-25"},
        patterns=(rf"\bsend (?:every|all|each)(?: the)? draft purchase orders?\b.*?\bon or before (?P<day>{DAY})",),
        items=400,
        expected=_send_drafts,
        play=Play(
            steps=(
                Scan("list_purchase_orders", "orders"),
                ForEach(
                    "update_purchase_order",
                    "[it for it in orders if it['status'] == 'draft' and it['created_on'] <= day]",
                    {"purchase_order_id": "it['id']", "status": "'sent'"},
                    into="sent",
                ),
            ),
            report={"sent": "len(sent)"},
            answer="Sent {sent} draft purchase orders created on or before {day}.",
        ),
    ),
    Task(
        app="inventory",
        slug="drop-unneeded-drafts",
        tier="everyday",
        prompt=(
            "Delete every draft purchase order whose product is discontinued or already has at least twice its "
            "reorder level in stock."
        ),
        patterns=(r"\bdelete (?:every|all|each)(?: the)? draft purchase orders?\b.*?\bdiscontinued\b.*?\btwice\b",),
        items=400,
        expected=_drop_unneeded,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                Scan("list_purchase_orders", "orders"),
                Let(
                    "unneeded",
                    "[it['sku'] for it in products if it['discontinued'] or it['stock'] >= 2 * it['reorder_level']]",
                ),
                ForEach(
                    "delete_purchase_order",
                    "[it for it in orders if it['status'] == 'draft' and it['sku'] in unneeded]",
                    {"purchase_order_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"deleted": "len(deleted)"},
            answer="Deleted {deleted} draft purchase orders that were no longer needed.",
        ),
    ),
    Task(
        app="inventory",
        slug="receive-sent",
        tier="everyday",
        prompt="Mark every sent purchase order as received and add its quantity to the product's stock.",
        patterns=(r"\bmark (?:every|all|each)(?: the)? sent purchase orders? (?:as )?received\b",),
        items=100,
        expected=_receive,
        play=Play(
            steps=(Scan("list_products", "products"), Scan("list_purchase_orders", "orders"), *RECEIVE_STEPS),
            report={"received": "len(received)", "restocked": "len(restocked)"},
            answer="Received {received} purchase orders and added their quantities to {restocked} products' stock.",
        ),
    ),
    Task(
        app="inventory",
        slug="write-off",
        tier="everyday",
        prompt="Write off every discontinued product that still has stock: set its stock to 0.",
        patterns=(
            r"\bdiscontinued products?\b.*?\bstill (?:has|have|holds?) stock\b.*?\bset (?:its|their) stock to 0",
        ),
        items=120,
        expected=_write_off,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['discontinued'] and it['stock'] > 0]",
                    {"product_id": "it['id']", "stock": "0"},
                    into="written_off",
                ),
            ),
            report={
                "written_off": "len(written_off)",
                "units": "sum(it['stock'] for it in products if it['discontinued'])",
            },
            answer="Wrote off {units} units of stock across {written_off} discontinued products.",
        ),
    ),
    Task(
        app="inventory",
        slug="new-cost",
        tier="everyday",
        prompt="The new price for {name} is ${cost:.2f} per unit: update the unit cost of every {name} product.",
        defaults={"name": "Toner Cartridge", "cost": 54.9},
        patterns=(r"\bnew (?:price|cost) for (?P<name>[\w -]+?) is \$?(?P<cost>\d+(?:\.\d+)?)",),
        items=150,
        expected=_new_cost,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['name'].lower() == name.lower() and it['unit_cost'] != cost]",
                    {"product_id": "it['id']", "unit_cost": "cost"},
                    into="repriced",
                ),
            ),
            report={"repriced": "len(repriced)"},
            answer="Updated the unit cost of {repriced} {name} products to ${cost:.2f}.",
        ),
    ),
    # -- long-horizon --
    Task(
        app="inventory",
        slug="close-warehouse",
        tier="long",
        prompt=(
            "We're closing the {source} warehouse: move all of its products to the {target} warehouse, and "
            "discontinue the ones that are out of stock."
        ),
        defaults={"source": "North", "target": "South"},
        patterns=(rf"\bclosing the {_warehouse('source')} warehouse\b.*?\bto (?:the )?{_warehouse('target')}\b",),
        items=500,
        expected=_close_warehouse,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                Let("leaving", "[it for it in products if it['warehouse'].lower() == source.lower()]"),
                ForEach(
                    "update_product",
                    "[it for it in leaving if it['stock'] > 0]",
                    {"product_id": "it['id']", "warehouse": WAREHOUSE_NAMED.format("target")},
                    into="moved",
                ),
                ForEach(
                    "update_product",
                    "[it for it in leaving if it['stock'] == 0]",
                    {"product_id": "it['id']", "warehouse": WAREHOUSE_NAMED.format("target"), "discontinued": "True"},
                    into="retired",
                ),
            ),
            report={"moved": "len(moved) + len(retired)", "retired": "len(retired)"},
            answer=(
                "Moved {moved} products from {source} to {target}; {retired} of them were out of stock and are "
                "now discontinued."
            ),
        ),
    ),
    Task(
        app="inventory",
        slug="reconcile",
        tier="long",
        prompt=(
            "Reconcile purchasing: receive every sent purchase order (mark it received and add its quantity to the "
            "product's stock); after that, every product that is still under its reorder level, is not "
            "discontinued and has no open order needs a new draft order of {quantity} units."
        ),
        defaults={"quantity": 200},
        patterns=(r"\breconcile purchasing\b.*?\bdraft order of (?P<quantity>\d[\d,]*) units",),
        items=300,
        expected=_reconcile,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                Scan("list_purchase_orders", "orders"),
                *RECEIVE_STEPS,
                Let("open_skus", "[po['sku'] for po in orders if po['status'] == 'draft']"),
                ForEach(
                    "create_purchase_order",
                    "[it for it in products if not it['discontinued'] and it['sku'] not in open_skus"
                    " and it['stock'] + arriving.get(it['sku'], 0) < it['reorder_level']]",
                    {"sku": "it['sku']", "quantity": "quantity"},
                    into="ordered",
                ),
            ),
            report={"received": "len(received)", "ordered": "len(ordered)"},
            answer=(
                "Received {received} purchase orders, then drafted {ordered} new orders of {quantity} units for "
                "products still under their reorder level."
            ),
        ),
    ),
    Task(
        app="inventory",
        slug="supplier-exit",
        tier="long",
        prompt=(
            "{old} is going out of business: switch all of their products to {new}, and replace each of their "
            "draft purchase orders with a new draft for the same product and quantity (just delete the drafts of "
            "discontinued products)."
        ),
        defaults={"old": "Blue Harbor Wholesale", "new": "Maple & Co"},
        patterns=(rf"^(?P<old>{SUPPLIER}) is going out of business\W+switch\b.*?\bto (?P<new>{SUPPLIER}),? and\b",),
        items=400,
        expected=_supplier_exit,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                Scan("list_purchase_orders", "orders"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['supplier'].lower() == old.lower()]",
                    {"product_id": "it['id']", "supplier": "new"},
                    into="switched",
                ),
                Let(
                    "drafts",
                    "[it for it in orders if it['status'] == 'draft' and it['supplier'].lower() == old.lower()]",
                ),
                ForEach("delete_purchase_order", "drafts", {"purchase_order_id": "it['id']"}, into="dropped"),
                Let("stopped", "[it['sku'] for it in products if it['discontinued']]"),
                ForEach(
                    "create_purchase_order",
                    "[it for it in drafts if it['sku'] not in stopped]",
                    {"sku": "it['sku']", "quantity": "it['quantity']"},
                    into="replaced",
                ),
            ),
            report={"switched": "len(switched)", "replaced": "len(replaced)"},
            answer="Switched {switched} products from {old} to {new} and replaced {replaced} draft purchase orders.",
        ),
    ),
    # -- scaling --
    Task(
        app="inventory",
        slug="reorder-floor",
        tier="scaling",
        prompt="Raise every reorder level that is below {level} to {level}.",
        defaults={"level": 50},
        patterns=(r"\braise every reorder level\b.*?\bbelow (?P<level>\d[\d,]*)\b",),
        items=50,
        sizes=SCALING_SIZES,
        expected=_reorder_floor,
        play=Play(
            steps=(
                Scan("list_products", "products"),
                ForEach(
                    "update_product",
                    "[it for it in products if it['reorder_level'] < level]",
                    {"product_id": "it['id']", "reorder_level": "level"},
                    into="raised",
                ),
            ),
            report={"raised": "len(raised)"},
            answer="Raised {raised} reorder levels that were below {level} to {level}.",
        ),
    ),
]
