"""Warehouse inventory: products in stock and the purchase orders that restock them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from workbench.apps import tasks_inventory
from workbench.apps.base import TODAY, DemoApp, Record, retry
from workbench.apps.data import STOCK_COSTS, STOCK_ITEMS, SUPPLIERS, WAREHOUSES
from workbench.apps.fields import IsoDate

Sku = Annotated[str, Field(pattern=r"^[A-Z]{2,4}-\d{3,6}$", description="Stock keeping unit like HAR-00042")]
Warehouse = Literal["North", "South", "East", "West"]
OrderStatus = Literal["draft", "sent", "received"]
Stock = Annotated[int, Field(ge=0, le=1_000_000)]
Quantity = Annotated[int, Field(ge=1, le=100_000)]
UnitCost = Annotated[float, Field(gt=0, le=100_000, description="Cost of one unit in US dollars")]
Text = Annotated[str, Field(min_length=1, max_length=80)]


class Product(Record):
    """One stocked product (a SKU held in one warehouse). ``supplier`` is the supplier's name."""

    sku: Sku
    name: Text
    category: Text
    warehouse: Warehouse
    stock: Stock
    reorder_level: Stock
    unit_cost: UnitCost
    supplier: Text
    discontinued: bool = False


class ProductPage(BaseModel):
    """One page of products."""

    items: list[Product]
    page: int
    page_size: int
    total: int
    has_more: bool


class PurchaseOrder(Record):
    """A purchase order restocking one product, by SKU, from that product's supplier."""

    sku: Sku
    quantity: Quantity
    supplier: Text
    status: OrderStatus = "draft"
    created_on: IsoDate


class PurchaseOrderPage(BaseModel):
    """One page of purchase orders."""

    items: list[PurchaseOrder]
    page: int
    page_size: int
    total: int
    has_more: bool


class Inventory(DemoApp):
    name = "inventory"
    title = "Warehouse inventory"
    about = "a company's stock: products (SKU, warehouse, stock, reorder level, supplier) and purchase orders"
    entities = {"products": Product, "purchase_orders": PurchaseOrder}
    id_prefixes = {"products": "prod", "purchase_orders": "po"}
    default_items = 50

    def populate(self, items: int) -> None:
        for number in range(items):
            self.add("products", Product(id=self.new_id("products"), **self._product(number)))
        products = list(self.rows["products"].values())
        for number in range(max(2, items // 8)):
            rng = self.rng("order", number)
            fields = {
                "quantity": rng.choice(range(20, 520, 20)),
                "status": rng.choices(("draft", "sent", "received"), weights=(30, 40, 30))[0],
                "created_on": (TODAY - timedelta(days=rng.randint(0, 45))).isoformat(),
            }
            product = products[int(rng.random() * len(products))]
            order = PurchaseOrder(
                id=self.new_id("purchase_orders"), sku=product.sku, supplier=product.supplier, **fields
            )
            self.add("purchase_orders", order)

    def _product(self, number: int) -> dict[str, Any]:
        rng = self.rng("product", number)
        category, name = rng.choice(STOCK_ITEMS)
        low, high = STOCK_COSTS[name]
        reorder_level = rng.choice((10, 20, 25, 50, 100, 200))
        level = rng.random()
        if level < 0.05:
            stock = 0
        elif level < 0.25:
            stock = rng.randint(1, reorder_level - 1)
        else:
            stock = rng.randint(reorder_level, reorder_level * 6)
        return {
            "sku": f"{category[:3].upper()}-{number + 1:05d}",
            "name": name,
            "category": category,
            "warehouse": rng.choice(WAREHOUSES),
            "stock": stock,
            "reorder_level": reorder_level,
            "unit_cost": round(rng.uniform(low, high), 2),
            "supplier": rng.choice(SUPPLIERS),
            "discontinued": rng.random() < 0.07,
        }

    def _product_by_sku(self, sku: str) -> Product:
        for product in self.rows["products"].values():
            if product.sku == sku:
                return product
        raise retry(f"no product with SKU {sku!r}")

    def tools(self) -> list[Callable[..., Any]]:
        async def list_products(page: int = 1) -> ProductPage:
            """List the products, one page at a time, in SKU creation order."""
            return self.page("products", page, ProductPage)

        async def get_product(product_id: str) -> Product:
            """Get one product by id."""
            return self.get("products", product_id)

        async def create_product(
            sku: Sku,
            name: Text,
            category: Text,
            warehouse: Warehouse,
            supplier: Text,
            unit_cost: UnitCost,
            reorder_level: Stock = 10,
            stock: Stock = 0,
        ) -> Product:
            """Add one product; its SKU must be new."""
            if any(p.sku == sku for p in self.rows["products"].values()):
                raise retry(f"a product with SKU {sku!r} already exists")
            return self.create(
                "products",
                sku=sku,
                name=name,
                category=category,
                warehouse=warehouse,
                stock=stock,
                reorder_level=reorder_level,
                unit_cost=unit_cost,
                supplier=supplier,
            )

        async def update_product(
            product_id: str,
            stock: Stock | None = None,
            reorder_level: Stock | None = None,
            unit_cost: UnitCost | None = None,
            warehouse: Warehouse | None = None,
            supplier: Text | None = None,
            discontinued: bool | None = None,
        ) -> Product:
            """Change one product (stock count, reorder level, cost, warehouse, supplier, discontinued).

            Omitted fields stay as they are.
            """
            return self.update(
                "products",
                product_id,
                stock=stock,
                reorder_level=reorder_level,
                unit_cost=unit_cost,
                warehouse=warehouse,
                supplier=supplier,
                discontinued=discontinued,
            )

        async def delete_product(product_id: str) -> Product:
            """Delete one product (takes one id). Returns the deleted product."""
            return self.delete("products", product_id)

        async def list_purchase_orders(page: int = 1) -> PurchaseOrderPage:
            """List the purchase orders, one page at a time."""
            return self.page("purchase_orders", page, PurchaseOrderPage)

        async def get_purchase_order(purchase_order_id: str) -> PurchaseOrder:
            """Get one purchase order by id."""
            return self.get("purchase_orders", purchase_order_id)

        async def create_purchase_order(sku: Sku, quantity: Quantity) -> PurchaseOrder:
            """Draft one purchase order for a product (by SKU); the supplier is the product's supplier.

            Discontinued products cannot be ordered.
            """
            product = self._product_by_sku(sku)
            if product.discontinued:
                raise retry(f"product {sku} is discontinued and cannot be ordered")
            return self.create(
                "purchase_orders",
                sku=sku,
                quantity=quantity,
                supplier=product.supplier,
                status="draft",
                created_on=TODAY.isoformat(),
            )

        async def update_purchase_order(
            purchase_order_id: str, quantity: Quantity | None = None, status: OrderStatus | None = None
        ) -> PurchaseOrder:
            """Change one purchase order's quantity or status. Received orders cannot be changed.

            Marking an order received does not change the product's stock: update the product too.
            """
            if self.get("purchase_orders", purchase_order_id).status == "received":
                raise retry(f"purchase order {purchase_order_id} was already received and cannot be changed")
            return self.update("purchase_orders", purchase_order_id, quantity=quantity, status=status)

        async def delete_purchase_order(purchase_order_id: str) -> PurchaseOrder:
            """Delete one draft purchase order. Sent and received orders cannot be deleted."""
            order = self.get("purchase_orders", purchase_order_id)
            if order.status != "draft":
                raise retry(f"purchase order {purchase_order_id} is {order.status}; only drafts can be deleted")
            return self.delete("purchase_orders", purchase_order_id)

        return [
            list_products,
            get_product,
            create_product,
            update_product,
            delete_product,
            list_purchase_orders,
            get_purchase_order,
            create_purchase_order,
            update_purchase_order,
            delete_purchase_order,
        ]


APP = Inventory


# -- tasks: the catalog lives in workbench/apps/tasks_inventory.py -------------------------------------------

TASKS = tasks_inventory.TASKS
