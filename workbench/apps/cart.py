"""Shopping cart: cart items and items saved for later."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BaseModel, Field

from workbench.apps import tasks_cart
from workbench.apps.base import TODAY, DemoApp, Record
from workbench.apps.data import COLORS, PRODUCTS

Price = Annotated[float, Field(gt=0, le=100_000, description="Price of one unit in US dollars")]
Quantity = Annotated[int, Field(ge=1, le=99)]


class CartItem(Record):
    """One line in the shopping cart."""

    product: str
    sku: str
    category: str
    color: str
    unit_price: Price
    quantity: Quantity
    gift_wrap: bool = False
    added_on: str


class CartItemPage(BaseModel):
    """One page of cart items."""

    items: list[CartItem]
    page: int
    page_size: int
    total: int
    has_more: bool


class SavedItem(Record):
    """A product saved for later (not in the cart)."""

    product: str
    sku: str
    category: str
    color: str
    unit_price: Price
    saved_on: str


class SavedItemPage(BaseModel):
    """One page of saved-for-later items."""

    items: list[SavedItem]
    page: int
    page_size: int
    total: int
    has_more: bool


class Cart(DemoApp):
    name = "cart"
    title = "Shopping cart"
    about = "a customer's shopping cart (cart items) and their saved-for-later list (saved items)"
    entities = {"cart_items": CartItem, "saved_items": SavedItem}
    id_prefixes = {"cart_items": "line", "saved_items": "saved"}
    default_items = 50

    def populate(self, items: int) -> None:
        for number in range(items):
            self.add("cart_items", CartItem(id=self.new_id("cart_items"), **self._product(number, "line")))
        for number in range(max(3, items // 10)):
            fields = self._product(number, "saved")
            fields.pop("quantity")
            fields.pop("gift_wrap")
            fields["saved_on"] = fields.pop("added_on")
            self.add("saved_items", SavedItem(id=self.new_id("saved_items"), **fields))

    def _product(self, number: int, kind: str) -> dict[str, Any]:
        rng = self.rng(kind, number)
        category, product, low, high = rng.choice(PRODUCTS)
        return {
            "product": product,
            "sku": f"{category[:3].upper()}-{rng.randint(1000, 9999)}",
            "category": category,
            "color": rng.choice(COLORS),
            "unit_price": round(rng.uniform(low, high), 2),
            "quantity": rng.choices((1, 2, 3, 4, 5, 6), weights=(55, 22, 10, 6, 4, 3))[0],
            "gift_wrap": rng.random() < 0.1,
            "added_on": (TODAY - timedelta(days=rng.randint(0, 90))).isoformat(),
        }

    def tools(self) -> list[Callable[..., Any]]:
        async def list_cart_items(page: int = 1) -> CartItemPage:
            """List the items in the cart, one page at a time, in the order they were added."""
            return self.page("cart_items", page, CartItemPage)

        async def get_cart_item(item_id: str) -> CartItem:
            """Get one cart item by id."""
            return self.get("cart_items", item_id)

        async def create_cart_item(
            product: str, sku: str, category: str, color: str, unit_price: Price, quantity: Quantity = 1
        ) -> CartItem:
            """Add one product to the cart."""
            return self.create(
                "cart_items",
                product=product,
                sku=sku,
                category=category,
                color=color,
                unit_price=unit_price,
                quantity=quantity,
                added_on=TODAY.isoformat(),
            )

        async def update_cart_item(
            item_id: str, quantity: Quantity | None = None, gift_wrap: bool | None = None
        ) -> CartItem:
            """Change one cart item's quantity or gift wrapping. Omitted fields stay as they are."""
            return self.update("cart_items", item_id, quantity=quantity, gift_wrap=gift_wrap)

        async def delete_cart_item(item_id: str) -> CartItem:
            """Remove one item from the cart (takes one id). Returns the removed item."""
            return self.delete("cart_items", item_id)

        async def list_saved_items(page: int = 1) -> SavedItemPage:
            """List the saved-for-later items, one page at a time."""
            return self.page("saved_items", page, SavedItemPage)

        async def get_saved_item(saved_id: str) -> SavedItem:
            """Get one saved-for-later item by id."""
            return self.get("saved_items", saved_id)

        async def create_saved_item(product: str, sku: str, category: str, color: str, unit_price: Price) -> SavedItem:
            """Save one product for later."""
            return self.create(
                "saved_items",
                product=product,
                sku=sku,
                category=category,
                color=color,
                unit_price=unit_price,
                saved_on=TODAY.isoformat(),
            )

        async def delete_saved_item(saved_id: str) -> SavedItem:
            """Remove one item from the saved-for-later list."""
            return self.delete("saved_items", saved_id)

        return [
            list_cart_items,
            get_cart_item,
            create_cart_item,
            update_cart_item,
            delete_cart_item,
            list_saved_items,
            get_saved_item,
            create_saved_item,
            delete_saved_item,
        ]


APP = Cart


# -- tasks: the catalog lives in workbench/apps/tasks_cart.py ------------------------------------------------

TASKS = tasks_cart.TASKS
