"""Pools of realistic values for seeding, kept in code so seeding needs no network and no files."""

from __future__ import annotations

FIRST_NAMES = (
    "Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam",
    "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wei", "Ximena",
    "Yusuf", "Zoe", "Aiko", "Bruno", "Carmen", "Diego", "Emeka", "Freya",
)  # fmt: skip

LAST_NAMES = (
    "Okafor", "Lindqvist", "Moreau", "Patel", "Novak", "Haddad", "Kim", "Fischer", "Silva", "Tanaka",
    "Brennan", "Costa", "Ivanova", "Mensah", "Rossi", "Nguyen", "Schmidt", "Alvarez", "Dubois", "Khan",
)  # fmt: skip

# (category, product, low price, high price)
PRODUCTS = (
    ("Electronics", "USB-C Charging Cable", 7.99, 19.99),
    ("Electronics", "Wireless Mouse", 14.99, 49.99),
    ("Electronics", "Mechanical Keyboard", 59.99, 189.00),
    ("Electronics", "Noise-Cancelling Headphones", 79.00, 349.00),
    ("Electronics", "Portable SSD 1TB", 69.99, 159.99),
    ("Electronics", "Smart Plug", 9.99, 29.99),
    ("Electronics", "HDMI Adapter", 8.49, 24.99),
    ("Electronics", "Webcam 1080p", 29.99, 99.99),
    ("Home", "Ceramic Mug Set", 12.00, 39.00),
    ("Home", "Cast Iron Skillet", 24.99, 64.99),
    ("Home", "Bamboo Cutting Board", 11.99, 34.99),
    ("Home", "Linen Duvet Cover", 49.00, 139.00),
    ("Home", "Scented Candle", 8.00, 28.00),
    ("Home", "Desk Lamp", 19.99, 79.99),
    ("Home", "Throw Pillow", 14.00, 45.00),
    ("Kitchen", "Chef's Knife", 29.99, 149.99),
    ("Kitchen", "French Press", 19.99, 54.99),
    ("Kitchen", "Espresso Beans 1kg", 17.50, 42.00),
    ("Kitchen", "Olive Oil 1L", 9.99, 29.99),
    ("Kitchen", "Stand Mixer", 199.00, 449.00),
    ("Outdoors", "Trail Running Shoes", 69.00, 169.00),
    ("Outdoors", "Insulated Water Bottle", 15.99, 44.99),
    ("Outdoors", "Camping Lantern", 18.99, 59.99),
    ("Outdoors", "Daypack 20L", 34.99, 119.99),
    ("Outdoors", "Yoga Mat", 19.99, 89.00),
    ("Books", "Paperback Novel", 7.99, 18.99),
    ("Books", "Hardcover Cookbook", 22.00, 45.00),
    ("Books", "Field Guide to Birds", 14.95, 32.00),
    ("Toys", "Wooden Puzzle", 9.99, 29.99),
    ("Toys", "Building Blocks Set", 24.99, 119.99),
    ("Beauty", "Face Moisturizer", 11.99, 58.00),
    ("Beauty", "Shampoo Bar", 6.50, 14.00),
    ("Office", "Gel Pens 12-pack", 5.99, 15.99),
    ("Office", "Ergonomic Chair Cushion", 24.99, 69.99),
    ("Office", "Notebook A5", 4.99, 16.00),
)

COLORS = ("Black", "White", "Navy", "Sage", "Graphite", "Sand", "Coral", "Olive", "Slate", "Ivory")

ROOMS = ("Atlas", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Zoom", "Phone booth 2")

MEETING_TOPICS = (
    "Weekly sync", "Design review", "Sprint planning", "1:1", "Budget check-in", "Customer call",
    "Hiring panel", "Retro", "Roadmap review", "Vendor demo", "Incident review", "Lunch & learn",
    "Quarterly planning", "Onboarding session", "Architecture deep dive", "Release go/no-go",
)  # fmt: skip

CHAT_LINES = (
    "Morning all! Anyone seen the latest build numbers?",
    "I'll take the on-call handover today.",
    "Can someone review my PR before lunch?",
    "The staging deploy is green again.",
    "Reminder: retro is moved to Thursday.",
    "Has anyone tried the new coffee place downstairs?",
    "Customer reported a bug with CSV export, looking into it.",
    "Shipping the hotfix in 10 minutes.",
    "Docs for the new API are up on the wiki.",
    "Who owns the billing dashboard these days?",
    "Great demo yesterday, well done team!",
    "Heads up: the VPN certificate expires on Friday.",
    "Lunch order is going in at 12:15.",
    "I'm out this afternoon, ping me on mobile if urgent.",
    "The flaky test is back; quarantining it for now.",
    "Please fill in the offsite survey by Wednesday.",
    "Can we move the design review to 3pm?",
    "New hire starts Monday, say hi to Priya!",
    "Metrics look healthy after the migration.",
    "Does anyone have the password for the test account?",
)  # fmt: skip

CARD_VERBS = ("Fix", "Add", "Refactor", "Document", "Investigate", "Migrate", "Design", "Test", "Remove", "Update")
CARD_OBJECTS = (
    "login flow", "CSV export", "billing page", "search index", "onboarding emails", "rate limiter",
    "settings screen", "audit log", "mobile layout", "payment webhook", "dark mode", "API pagination",
    "error reporting", "image uploads", "notification center", "SSO integration",
)  # fmt: skip

SUPPLIERS = (
    "Acme Supply Co", "Northwind Traders", "Blue Harbor Wholesale", "Summit Parts", "Greenleaf Goods",
    "Ironclad Industrial", "Pacific Components", "Maple & Co",
)  # fmt: skip

WAREHOUSES = ("North", "South", "East", "West")

STOCK_ITEMS = (
    ("Hardware", "Hex Bolt M8"), ("Hardware", "Wood Screw 4x40"), ("Hardware", "Hinge 75mm"),
    ("Hardware", "Cable Tie 200mm"), ("Electrical", "LED Bulb E27"), ("Electrical", "Extension Lead 3m"),
    ("Electrical", "AA Battery"), ("Electrical", "Wall Socket"), ("Packaging", "Cardboard Box M"),
    ("Packaging", "Bubble Wrap Roll"), ("Packaging", "Packing Tape"), ("Cleaning", "Microfiber Cloth"),
    ("Cleaning", "Floor Cleaner 5L"), ("Cleaning", "Nitrile Gloves"), ("Safety", "Safety Glasses"),
    ("Safety", "Hi-Vis Vest"), ("Safety", "Ear Defenders"), ("Office", "Printer Paper A4"),
    ("Office", "Toner Cartridge"), ("Office", "Sticky Notes"),
)  # fmt: skip


PEOPLE = tuple(f"{first} {last}" for first, last in zip(FIRST_NAMES, LAST_NAMES, strict=False))
"""Twenty full names (Ada Okafor, Ben Lindqvist, ...) shared by the calendar, chat room and kanban board."""

# (capacity, floor, has video) per room in ROOMS
ROOM_DETAILS = (
    (12, 3, True), (6, 3, True), (8, 2, False), (20, 4, True), (4, 2, False), (10, 5, True),
    (16, 1, True), (30, 1, True), (50, 0, True), (1, 2, False),
)  # fmt: skip

# (channel name, topic)
CHANNELS = (
    ("general", "Company-wide announcements and chatter"),
    ("random", "Anything goes"),
    ("engineering", "Builds, deploys and code reviews"),
    ("design", "Mockups, critiques and the design system"),
    ("support", "Customer issues that need a hand"),
    ("releases", "Release notes and go/no-go calls"),
    ("incidents", "Live incidents and follow-ups"),
    ("marketing", "Campaigns, launches and copy reviews"),
    ("sales", "Deals, demos and pipeline"),
    ("ops", "Infrastructure, on-call and tooling"),
    ("hiring", "Interview loops and candidate debriefs"),
    ("watercooler", "Lunch plans, pets and weekend stories"),
)

# (column name, work-in-progress limit or None), in board order
BOARD_COLUMNS = (("Backlog", None), ("To do", 15), ("In progress", 6), ("Review", 4), ("Done", None))

CARD_LABELS = ("bug", "feature", "tech-debt", "ux", "security", "performance", "docs", "customer")

ALL_DAY_TOPICS = ("Offsite", "Company holiday", "Conference", "Hackathon", "Team training", "Customer visit")

# stock item name -> (low, high) unit cost in US dollars, for every item in STOCK_ITEMS
STOCK_COSTS = {
    "Hex Bolt M8": (0.08, 0.35), "Wood Screw 4x40": (0.03, 0.12), "Hinge 75mm": (1.20, 4.50),
    "Cable Tie 200mm": (0.02, 0.09), "LED Bulb E27": (1.80, 6.50), "Extension Lead 3m": (6.00, 18.00),
    "AA Battery": (0.25, 0.90), "Wall Socket": (2.50, 9.00), "Cardboard Box M": (0.40, 1.60),
    "Bubble Wrap Roll": (8.00, 24.00), "Packing Tape": (0.90, 3.20), "Microfiber Cloth": (0.50, 2.00),
    "Floor Cleaner 5L": (6.50, 19.00), "Nitrile Gloves": (4.00, 12.00), "Safety Glasses": (1.50, 7.50),
    "Hi-Vis Vest": (2.00, 8.00), "Ear Defenders": (5.00, 22.00), "Printer Paper A4": (3.50, 8.00),
    "Toner Cartridge": (25.00, 89.00), "Sticky Notes": (0.60, 2.40),
}  # fmt: skip
