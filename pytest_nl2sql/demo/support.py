"""The support demo database: Chinook's customers raising tickets with a support desk.

Generated, not real: `rows()` draws everything from `random.Random(SEED)`, so every call gives
the same rows. The 59 customers are Chinook's (same ids, names, emails, countries), which is
what lets a question about "customers" belong to either database. Tickets run from 2007 to the
end of 2011, the era of the demo's Chinook invoices; the data is "as of" AS_OF, so recent
tickets may still be open. The skew is deliberate: a few customers and products raise most
tickets, most tickets are low priority, and resolution times have a long tail.
"""

from __future__ import annotations

import functools
import math
import random
from datetime import date, datetime, timedelta

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from pytest_nl2sql.demo import chinook
from pytest_nl2sql.demo.coltypes import DATE_FORMAT, TIMESTAMP_FORMAT, calendar_date, timestamp

SEED = 20111231
START = datetime(2007, 1, 1)
AS_OF = datetime(2012, 1, 1)
"""The moment the data describes: tickets not resolved by then are open or pending."""
TICKET_COUNT = 3200

METADATA = MetaData()
"""The support schema (snake_case, one definition for SQLite and PostgreSQL)."""


def _id(name: str) -> Column:
    return Column(name, Integer, primary_key=True, autoincrement=False)


Table(
    "customers",
    METADATA,
    _id("customer_id"),
    Column("first_name", String(40), nullable=False),
    Column("last_name", String(20), nullable=False),
    Column("email", String(60), nullable=False, unique=True),
    Column("company", String(80)),
    Column("city", String(40)),
    Column("country", String(40)),
    Column("plan", String(20), nullable=False),
    Column("signed_up_on", calendar_date(), nullable=False),
)
Table(
    "products",
    METADATA,
    _id("product_id"),
    Column("name", String(60), nullable=False, unique=True),
    Column("category", String(20), nullable=False),
    Column("launched_on", calendar_date(), nullable=False),
)
Table(
    "teams",
    METADATA,
    _id("team_id"),
    Column("name", String(40), nullable=False, unique=True),
    Column("location", String(40), nullable=False),
)
Table(
    "agents",
    METADATA,
    _id("agent_id"),
    Column("team_id", Integer, ForeignKey("teams.team_id"), nullable=False),
    Column("first_name", String(40), nullable=False),
    Column("last_name", String(40), nullable=False),
    Column("email", String(60), nullable=False, unique=True),
    Column("hired_on", calendar_date(), nullable=False),
    Column("is_active", Boolean, nullable=False),
    Index("ix_agents_team_id", "team_id"),
)
Table(
    "slas",
    METADATA,
    Column("priority", String(10), primary_key=True),
    Column("severity_rank", Integer, nullable=False, unique=True),
    Column("first_response_minutes", Integer, nullable=False),
    Column("resolution_hours", Integer, nullable=False),
)
Table(
    "tickets",
    METADATA,
    _id("ticket_id"),
    Column("customer_id", Integer, ForeignKey("customers.customer_id"), nullable=False),
    Column("product_id", Integer, ForeignKey("products.product_id"), nullable=False),
    Column("agent_id", Integer, ForeignKey("agents.agent_id")),
    Column("priority", String(10), ForeignKey("slas.priority"), nullable=False),
    Column("status", String(10), nullable=False),
    Column("channel", String(10), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("created_at", timestamp(), nullable=False),
    Column("first_response_at", timestamp()),
    Column("resolved_at", timestamp()),
    CheckConstraint("status IN ('open', 'pending', 'resolved', 'closed')", name="ck_tickets_status"),
    Index("ix_tickets_customer_id", "customer_id"),
    Index("ix_tickets_product_id", "product_id"),
    Index("ix_tickets_agent_id", "agent_id"),
)
Table(
    "ticket_events",
    METADATA,
    _id("event_id"),
    Column("ticket_id", Integer, ForeignKey("tickets.ticket_id"), nullable=False),
    Column("event_type", String(20), nullable=False),
    Column("actor", String(10), nullable=False),
    Column("agent_id", Integer, ForeignKey("agents.agent_id")),
    Column("from_status", String(10)),
    Column("to_status", String(10)),
    Column("created_at", timestamp(), nullable=False),
    Index("ix_ticket_events_ticket_id", "ticket_id"),
)
Table(
    "satisfaction_ratings",
    METADATA,
    _id("rating_id"),
    Column("ticket_id", Integer, ForeignKey("tickets.ticket_id"), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("comment", Text),
    Column("rated_at", timestamp(), nullable=False),
    UniqueConstraint("ticket_id", name="uq_satisfaction_ratings_ticket_id"),
    CheckConstraint("rating BETWEEN 1 AND 5", name="ck_satisfaction_ratings_rating"),
)

# priority: (severity rank, share of tickets, first-response target minutes, resolution target
# hours, median first response minutes, median resolution hours)
PRIORITIES = {
    "low": (1, 0.52, 1440, 120, 420, 50),
    "normal": (2, 0.30, 480, 72, 150, 30),
    "high": (3, 0.13, 120, 24, 45, 12),
    "urgent": (4, 0.05, 30, 8, 15, 4),
}

# name, category, launched on, relative ticket volume
PRODUCTS = [
    ("Chinook Web Store", "store", date(2005, 3, 1), 9.0),
    ("Chinook Player for Windows", "app", date(2005, 6, 15), 7.0),
    ("Chinook Player for Mac", "app", date(2006, 2, 1), 3.5),
    ("Chinook Mobile for iPhone", "app", date(2008, 7, 11), 6.0),
    ("Chinook Mobile for Android", "app", date(2009, 10, 1), 4.0),
    ("Downloads and Library", "store", date(2005, 3, 1), 5.0),
    ("Billing and Payments", "billing", date(2005, 3, 1), 6.5),
    ("Gift Cards", "billing", date(2006, 11, 1), 1.5),
    ("Account and Sign-in", "account", date(2005, 3, 1), 4.5),
    ("Playlists and Sharing", "app", date(2007, 5, 1), 2.0),
    ("Chinook Radio Streaming", "streaming", date(2010, 4, 1), 3.0),
    ("Business Licensing", "licensing", date(2006, 9, 1), 1.0),
]

# team name, location, product categories it owns
TEAMS = [
    ("Customer Care", "Calgary", ("store", "account")),
    ("Billing", "Edmonton", ("billing",)),
    ("Technical Support", "Lethbridge", ("app", "streaming")),
    ("Business Accounts", "Calgary", ("licensing",)),
]

AGENT_NAMES = [
    ("Maya", "Fortin"), ("Liam", "Okafor"), ("Sofia", "Lindqvist"), ("Noah", "Tremblay"),
    ("Aisha", "Rahman"), ("Ethan", "Kowalski"), ("Chloe", "Nakamura"), ("Lucas", "Moreau"),
    ("Priya", "Sharma"), ("Owen", "MacLeod"), ("Emma", "Schultz"), ("Mateo", "Alvarez"),
    ("Grace", "O'Neill"), ("Jonas", "Berg"), ("Hannah", "Dubois"), ("Ravi", "Menon"),
    ("Zoe", "Papadopoulos"), ("Felix", "Wagner"),
]
AGENT_TEAMS = [0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 0, 2]

SUBJECTS = {
    "store": [
        "Order confirmation never arrived", "Album shows as purchased but will not play",
        "Wrong track delivered in my order", "Price changed between cart and checkout",
        "Cannot find an album I bought earlier", "Search gives no results for an artist",
    ],
    "app": [
        "App crashes on start", "Playback stops after a few seconds",
        "Library does not sync between devices", "Tracks play in the wrong order",
        "Cannot import my playlists", "Album artwork is missing",
        "Update failed to install",
    ],
    "billing": [
        "Charged twice for one invoice", "Refund not received", "Card declined at checkout",
        "Need a copy of my invoice", "Gift card balance is wrong", "Billing address will not update",
    ],
    "account": [
        "Cannot sign in", "Password reset email not received", "Please delete my account",
        "Two accounts need merging", "Email address change",
    ],
    "streaming": [
        "Radio station keeps buffering", "Stream quality is poor", "Radio skips songs",
    ],
    "licensing": [
        "Licence renewal quote", "Add seats to our business licence",
        "Public performance rights question", "Invoice for licence needs our VAT number",
    ],
}

CHANNELS = {"email": 0.45, "chat": 0.25, "phone": 0.15, "web": 0.15}

COMMENTS = {
    1: ["Took far too long.", "Problem is still not fixed.", "Nobody read my messages properly."],
    2: ["Slow answers.", "Had to explain the problem three times.", "Fixed in the end, but slowly."],
    3: ["OK.", "Fine, nothing special.", "Solved, but I had to chase it."],
    4: ["Quick and helpful.", "Good support, thanks.", "Sorted out without fuss."],
    5: ["Excellent, thank you!", "Fast and friendly.", "Best support I have had.", "Perfect."],
}


@functools.cache
def rows(seed: int = SEED) -> dict[str, tuple[tuple, ...]]:
    """Every support table's rows, as tuples in the schema's column order; same seed, same rows."""
    return _Generator(random.Random(seed)).run()


def _ts(moment: datetime) -> str:
    return moment.strftime(TIMESTAMP_FORMAT)


def _day(day: date) -> str:
    return day.strftime(DATE_FORMAT)


class _Generator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tables: dict[str, list[tuple]] = {name: [] for name in METADATA.tables}

    def run(self) -> dict[str, tuple[tuple, ...]]:
        self._slas()
        customers = self._customers()
        self._products()
        agents_by_team = self._teams_and_agents()
        self._tickets(customers, agents_by_team)
        return {name: tuple(table_rows) for name, table_rows in self.tables.items()}

    def _slas(self) -> None:
        for priority, (rank, _, first_minutes, resolution_hours, _, _) in PRIORITIES.items():
            self.tables["slas"].append((priority, rank, first_minutes, resolution_hours))

    def _customers(self) -> list[int]:
        columns = [c.name for c in chinook.METADATA.tables["Customer"].columns]
        pick = [columns.index(name) for name in
                ("CustomerId", "FirstName", "LastName", "Email", "Company", "City", "Country")]
        ids = []
        for source in chinook.rows()["Customer"]:
            customer_id, first, last, email, company, city, country = (source[i] for i in pick)
            if company:
                plan = "business"
            else:
                plan = "plus" if self.rng.random() < 0.35 else "basic"
            signed_up = date(2005, 1, 1) + timedelta(days=self.rng.randrange(730))
            self.tables["customers"].append(
                (customer_id, first, last, email, company, city, country, plan, _day(signed_up))
            )
            ids.append(customer_id)
        return ids

    def _products(self) -> None:
        for product_id, (name, category, launched, _) in enumerate(PRODUCTS, start=1):
            self.tables["products"].append((product_id, name, category, _day(launched)))

    def _teams_and_agents(self) -> dict[int, list[tuple[int, date]]]:
        for team_id, (name, location, _) in enumerate(TEAMS, start=1):
            self.tables["teams"].append((team_id, name, location))
        agents_by_team: dict[int, list[tuple[int, date]]] = {}
        for agent_id, ((first, last), team_index) in enumerate(
            zip(AGENT_NAMES, AGENT_TEAMS, strict=True), start=1
        ):
            team_id = team_index + 1
            hired = date(2006, 6, 1) + timedelta(days=self.rng.randrange(0, 1400))
            if agent_id <= len(TEAMS):  # every team has someone from the start
                hired = date(2006, 1, 2) + timedelta(days=self.rng.randrange(180))
            email = f"{first}.{last}".lower().replace("'", "") + "@chinookcorp.com"
            active = self.rng.random() > 0.15
            self.tables["agents"].append((agent_id, team_id, first, last, email, _day(hired), active))
            agents_by_team.setdefault(team_id, []).append((agent_id, hired))
        return agents_by_team

    def _created_times(self) -> list[datetime]:
        span = (AS_OF - START).days
        hour_weights = [1, 1, 1, 1, 1, 2, 3, 6, 10, 12, 12, 11, 9, 10, 11, 11, 10, 8, 6, 5, 4, 3, 2, 1]
        times = []
        while len(times) < TICKET_COUNT:
            # volume grows with the business: later days are more likely than earlier ones
            day = int(span * self.rng.random() ** 0.6)
            moment = START + timedelta(days=day)
            if moment.weekday() >= 5 and self.rng.random() < 0.6:
                continue
            hour = self.rng.choices(range(24), weights=hour_weights)[0]
            times.append(moment + timedelta(hours=hour, seconds=self.rng.randrange(3600)))
        times.sort()
        return times

    def _tickets(self, customers: list[int], agents_by_team: dict[int, list[tuple[int, date]]]) -> None:
        rng = self.rng
        busy_order = customers[:]
        rng.shuffle(busy_order)
        customer_weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(busy_order))]
        product_weights = [volume for *_, volume in PRODUCTS]
        priorities = list(PRIORITIES)
        priority_weights = [PRIORITIES[p][1] for p in priorities]
        team_of_category = {cat: i + 1 for i, (_, _, cats) in enumerate(TEAMS) for cat in cats}
        plans = {row[0]: row[7] for row in self.tables["customers"]}
        agent_load = {agent_id: 0.5 + rng.random() * 2 for agent_id, *_ in self.tables["agents"]}
        event_id = 0
        rating_id = 0
        for ticket_id, created in enumerate(self._created_times(), start=1):
            customer_id = rng.choices(busy_order, weights=customer_weights)[0]
            product_index = rng.choices(range(len(PRODUCTS)), weights=product_weights)[0]
            while PRODUCTS[product_index][2] > created.date():
                product_index = rng.choices(range(len(PRODUCTS)), weights=product_weights)[0]
            name, category, _, _ = PRODUCTS[product_index]
            priority = rng.choices(priorities, weights=priority_weights)[0]
            if plans[customer_id] == "business" and priority == "low" and rng.random() < 0.4:
                priority = "normal"
            channel = rng.choices(list(CHANNELS), weights=list(CHANNELS.values()))[0]
            subject = rng.choice(SUBJECTS[category])
            _, _, first_target, resolution_target, first_median, resolution_median = PRIORITIES[priority]

            first_response = created + timedelta(minutes=max(1.0, rng.lognormvariate(math.log(first_median), 1.0)))
            hours = rng.lognormvariate(math.log(resolution_median), 1.25)
            if rng.random() < 0.08:  # stuck waiting on a fix or on the customer: the long tail
                hours = min(hours * rng.uniform(10, 40), 24 * 300)
            resolved = max(first_response + timedelta(minutes=5), created + timedelta(hours=hours))
            resolved = resolved.replace(microsecond=0)
            first_response = first_response.replace(microsecond=0)

            team_id = team_of_category[category]
            staff = [a for a, hired in agents_by_team[team_id] if hired <= created.date()]
            if not staff:
                staff = [a for a, hired in agents_by_team[1] if hired <= created.date()]
            agent_id = rng.choices(staff, weights=[agent_load[a] for a in staff])[0]

            events: list[tuple[str, str, int | None, str | None, str | None, datetime]] = [
                ("created", "customer", None, None, "open", created)
            ]
            status = "open"
            answered = first_response < AS_OF
            if answered:
                assigned = created + (first_response - created) * (0.2 + 0.5 * rng.random())
                events.append(("assigned", "system", agent_id, None, None, assigned.replace(microsecond=0)))
                events.append(("agent_reply", "agent", agent_id, None, None, first_response))
                events.append(("status_change", "agent", agent_id, "open", "pending", first_response))
                status = "pending"
                rounds = 0
                while rng.random() < 0.45 and rounds < 6:
                    rounds += 1
                gaps = sorted(rng.random() for _ in range(2 * rounds))
                for index, share in enumerate(gaps):
                    moment = (first_response + (resolved - first_response) * share).replace(microsecond=0)
                    if moment >= AS_OF:
                        break
                    if index % 2 == 0:
                        events.append(("customer_reply", "customer", None, None, None, moment))
                        events.append(("status_change", "customer", None, "pending", "open", moment))
                        status = "open"
                    else:
                        events.append(("agent_reply", "agent", agent_id, None, None, moment))
                        events.append(("status_change", "agent", agent_id, "open", "pending", moment))
                        status = "pending"
                if resolved < AS_OF:
                    events.append(("status_change", "agent", agent_id, status, "resolved", resolved))
                    status = "resolved"
                    closed = resolved + timedelta(days=7)
                    if closed < AS_OF:
                        events.append(("status_change", "system", None, "resolved", "closed", closed))
                        status = "closed"
            is_resolved = status in ("resolved", "closed")
            self.tables["tickets"].append((
                ticket_id, customer_id, product_index + 1, agent_id if answered else None, priority,
                status, channel, subject, _ts(created),
                _ts(first_response) if answered else None,
                _ts(resolved) if is_resolved else None,
            ))
            for event_type, actor, event_agent, from_status, to_status, moment in events:
                event_id += 1
                self.tables["ticket_events"].append(
                    (event_id, ticket_id, event_type, actor, event_agent, from_status, to_status, _ts(moment))
                )
            if is_resolved and rng.random() < 0.62:
                rated_at = resolved + timedelta(hours=rng.lognormvariate(math.log(20), 1.0))
                if rated_at < AS_OF:
                    on_time = (resolved - created) <= timedelta(hours=resolution_target) and (
                        first_response - created
                    ) <= timedelta(minutes=first_target)
                    weights = [2, 3, 10, 35, 50] if on_time else [22, 22, 26, 18, 12]
                    rating = rng.choices(range(1, 6), weights=weights)[0]
                    comment = rng.choice(COMMENTS[rating]) if rng.random() < 0.45 else None
                    rating_id += 1
                    self.tables["satisfaction_ratings"].append(
                        (rating_id, ticket_id, rating, comment, _ts(rated_at.replace(microsecond=0)))
                    )
