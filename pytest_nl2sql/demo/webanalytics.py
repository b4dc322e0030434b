"""The webanalytics demo database: six months of traffic on the Chinook web store's site.

Generated, not real: `rows()` draws everything from `random.Random(SEED)`, so every call gives
the same rows (well over 100,000 in all). The shape is that of real site analytics: page
popularity follows a Zipf law, most sessions are one or two pages long, returning visitors
come back in proportion to how often they already came, a few campaigns bring most of the
campaign traffic, and December's holiday season is busier than July.
"""

from __future__ import annotations

import functools
import math
import random
from datetime import date, datetime, timedelta
from itertools import accumulate

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
)

from pytest_nl2sql.demo.coltypes import DATE_FORMAT, calendar_date, timestamp

SEED = 20110701
START = datetime(2011, 7, 1)
END = datetime(2012, 1, 1)
SESSION_COUNT = 32_000
RETURN_WINDOW = 4_000
"""Returning visitors are drawn from the visitors of this many most recent sessions."""

METADATA = MetaData()
"""The web analytics schema (snake_case, one definition for SQLite and PostgreSQL)."""


def _id(name: str) -> Column:
    return Column(name, Integer, primary_key=True, autoincrement=False)


Table(
    "devices",
    METADATA,
    _id("device_id"),
    Column("device_type", String(10), nullable=False),
    Column("os", String(20), nullable=False),
    Column("browser", String(30), nullable=False),
)
Table(
    "pages",
    METADATA,
    _id("page_id"),
    Column("path", String(120), nullable=False, unique=True),
    Column("title", String(120), nullable=False),
    Column("page_type", String(20), nullable=False),
)
Table(
    "campaigns",
    METADATA,
    _id("campaign_id"),
    Column("name", String(60), nullable=False, unique=True),
    Column("channel", String(20), nullable=False),
    Column("source", String(30), nullable=False),
    Column("started_on", calendar_date(), nullable=False),
    Column("ended_on", calendar_date(), nullable=False),
    Column("budget", Numeric(10, 2), nullable=False),
)
Table(
    "visitors",
    METADATA,
    _id("visitor_id"),
    Column("first_seen_at", timestamp(), nullable=False),
    Column("country", String(40), nullable=False),
    Column("is_registered", Boolean, nullable=False),
)
Table(
    "sessions",
    METADATA,
    _id("session_id"),
    Column("visitor_id", Integer, ForeignKey("visitors.visitor_id"), nullable=False),
    Column("device_id", Integer, ForeignKey("devices.device_id"), nullable=False),
    Column("campaign_id", Integer, ForeignKey("campaigns.campaign_id")),
    Column("traffic_source", String(20), nullable=False),
    Column("referrer_domain", String(60)),
    Column("landing_page_id", Integer, ForeignKey("pages.page_id"), nullable=False),
    Column("started_at", timestamp(), nullable=False),
    Column("duration_seconds", Integer, nullable=False),
    Column("page_view_count", Integer, nullable=False),
    Index("ix_sessions_visitor_id", "visitor_id"),
    Index("ix_sessions_campaign_id", "campaign_id"),
    Index("ix_sessions_started_at", "started_at"),
)
Table(
    "page_views",
    METADATA,
    _id("page_view_id"),
    Column("session_id", Integer, ForeignKey("sessions.session_id"), nullable=False),
    Column("page_id", Integer, ForeignKey("pages.page_id"), nullable=False),
    Column("view_number", Integer, nullable=False),
    Column("viewed_at", timestamp(), nullable=False),
    Column("seconds_on_page", Integer, nullable=False),
    Index("ix_page_views_session_id", "session_id"),
    Index("ix_page_views_page_id", "page_id"),
)
Table(
    "events",
    METADATA,
    _id("event_id"),
    Column("session_id", Integer, ForeignKey("sessions.session_id"), nullable=False),
    Column("page_id", Integer, ForeignKey("pages.page_id"), nullable=False),
    Column("event_type", String(30), nullable=False),
    Column("occurred_at", timestamp(), nullable=False),
    Index("ix_events_session_id", "session_id"),
)
Table(
    "conversions",
    METADATA,
    _id("conversion_id"),
    Column("session_id", Integer, ForeignKey("sessions.session_id"), nullable=False),
    Column("campaign_id", Integer, ForeignKey("campaigns.campaign_id")),
    Column("conversion_type", String(20), nullable=False),
    Column("revenue", Numeric(10, 2)),
    Column("converted_at", timestamp(), nullable=False),
    Index("ix_conversions_session_id", "session_id"),
)

# device type, os, browser, share of sessions (2011: desktop-heavy, mobile rising)
DEVICES = [
    ("desktop", "Windows", "Internet Explorer", 16.0),
    ("desktop", "Windows", "Firefox", 14.0),
    ("desktop", "Windows", "Chrome", 15.0),
    ("desktop", "Mac OS X", "Safari", 8.0),
    ("desktop", "Mac OS X", "Chrome", 3.0),
    ("desktop", "Mac OS X", "Firefox", 2.0),
    ("desktop", "Linux", "Firefox", 1.5),
    ("desktop", "Linux", "Chrome", 1.0),
    ("mobile", "iOS", "Mobile Safari", 9.0),
    ("mobile", "Android", "Android Browser", 7.0),
    ("mobile", "Android", "Chrome", 1.0),
    ("mobile", "BlackBerry", "BlackBerry Browser", 2.0),
    ("mobile", "Windows Phone", "IE Mobile", 0.5),
    ("tablet", "iOS", "Mobile Safari", 5.0),
    ("tablet", "Android", "Android Browser", 1.5),
]

GENRES = ["rock", "jazz", "metal", "alternative-punk", "latin", "blues", "classical", "pop",
          "soundtrack", "reggae", "electronica-dance", "hip-hop-rap", "world", "tv-shows"]
ARTISTS = ["iron-maiden", "u2", "led-zeppelin", "metallica", "deep-purple", "lost", "pearl-jam",
           "van-halen", "faith-no-more", "eric-clapton", "os-paralamas", "the-office",
           "queen", "miles-davis", "ac-dc", "chico-buarque", "gilberto-gil", "audioslave",
           "nirvana", "red-hot-chili-peppers", "frank-sinatra", "the-rolling-stones",
           "titas", "caetano-veloso", "kiss", "body-count", "jamiroquai", "santana"]

COUNTRIES = {
    "USA": 30, "Canada": 9, "United Kingdom": 8, "Germany": 7, "Brazil": 7, "France": 6,
    "Australia": 4, "India": 4, "Netherlands": 3, "Spain": 3, "Italy": 3, "Sweden": 2,
    "Portugal": 2, "Poland": 2, "Argentina": 2, "Chile": 1, "Norway": 1, "Denmark": 1,
    "Ireland": 1, "Finland": 1, "Czech Republic": 1, "Austria": 1, "Belgium": 1, "Hungary": 1,
}

# name, channel, source, start, end, budget, pull (relative traffic while running)
CAMPAIGNS = [
    ("Summer Rock Sale", "email", "newsletter", date(2011, 7, 4), date(2011, 7, 31), 4_000, 3.0),
    ("Back to School Playlists", "social", "facebook", date(2011, 8, 15), date(2011, 9, 15), 6_500, 2.0),
    ("Jazz Week", "email", "newsletter", date(2011, 9, 19), date(2011, 9, 25), 1_500, 1.0),
    ("Brand Search 2011", "paid_search", "google", date(2011, 7, 1), date(2011, 12, 31), 24_000, 6.0),
    ("Metal Anniversary", "display", "ad_network", date(2011, 10, 1), date(2011, 10, 31), 9_000, 1.2),
    ("Halloween Soundtracks", "social", "twitter", date(2011, 10, 20), date(2011, 10, 31), 2_000, 0.6),
    ("Black Friday Deals", "email", "newsletter", date(2011, 11, 21), date(2011, 11, 28), 5_000, 14.0),
    ("Cyber Monday", "paid_search", "google", date(2011, 11, 28), date(2011, 11, 29), 8_000, 10.0),
    ("Holiday Gift Cards", "display", "ad_network", date(2011, 11, 25), date(2011, 12, 24), 18_000, 5.0),
    ("Holiday Gift Cards Social", "social", "facebook", date(2011, 12, 1), date(2011, 12, 24), 7_500, 2.5),
    ("Year in Music", "email", "newsletter", date(2011, 12, 27), date(2011, 12, 31), 1_200, 1.5),
    ("Affiliate Reviews", "affiliate", "music_blogs", date(2011, 7, 1), date(2011, 12, 31), 3_000, 0.8),
]

REFERRERS = {"facebook.com": 5, "twitter.com": 2, "reddit.com": 2, "last.fm": 3,
             "allmusic.com": 2, "wikipedia.org": 2, "pitchfork.com": 1, "myspace.com": 1}

EVENT_TYPES = {
    "home": {"click_banner": 5, "search": 4, "play_preview": 1},
    "category": {"play_preview": 5, "click_product": 6, "sort_list": 2},
    "artist": {"play_preview": 6, "click_product": 4, "share": 1},
    "product": {"play_preview": 8, "add_to_cart": 5, "add_to_wishlist": 1, "share": 1},
    "search": {"search": 6, "click_product": 5},
    "cart": {"begin_checkout": 6, "remove_from_cart": 2},
    "checkout": {"submit_payment": 5},
    "account": {"update_profile": 2, "sign_up_start": 3},
    "help": {"open_faq": 4, "contact_support": 1},
    "blog": {"share": 2, "play_preview": 2},
}


@functools.cache
def rows(seed: int = SEED) -> dict[str, tuple[tuple, ...]]:
    """Every web analytics table's rows, in the schema's column order; same seed, same rows."""
    return _Generator(random.Random(seed)).run()


def _pages() -> list[tuple[int, str, str, str]]:
    pages = [
        ("/", "Chinook Music Store", "home"),
        ("/search", "Search", "search"),
        ("/cart", "Your cart", "cart"),
        ("/checkout", "Checkout", "checkout"),
        ("/checkout/thank-you", "Thank you for your order", "checkout"),
        ("/account", "Your account", "account"),
        ("/account/sign-up", "Create an account", "account"),
        ("/help", "Help centre", "help"),
        ("/help/downloads", "Help: downloading your music", "help"),
        ("/gift-cards", "Gift cards", "product"),
        ("/new-releases", "New releases", "category"),
        ("/top-tracks", "Top tracks", "category"),
    ]
    for genre in GENRES:
        pages.append((f"/genre/{genre}", f"Genre: {genre.replace('-', ' ').title()}", "category"))
    for artist in ARTISTS:
        name = artist.replace("-", " ").title()
        pages.append((f"/artist/{artist}", f"Artist: {name}", "artist"))
        pages.append((f"/artist/{artist}/albums", f"Albums by {name}", "product"))
    for number in range(1, 13):
        pages.append((f"/blog/2011/{number:02d}", f"Chinook blog: staff picks {number}", "blog"))
    return [(page_id, path, title, kind) for page_id, (path, title, kind) in enumerate(pages, start=1)]


class _Generator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._campaigns_by_day: dict[date, tuple[list[int], list[float]]] = {}

    def run(self) -> dict[str, tuple[tuple, ...]]:
        rng = self.rng
        devices = [(i, kind, os, browser) for i, (kind, os, browser, _) in enumerate(DEVICES, start=1)]
        device_cum = list(accumulate(share for *_, share in DEVICES))
        pages = _pages()
        page_types = {page_id: kind for page_id, _, _, kind in pages}
        # Zipf popularity in a fixed shuffled order, with the home page most popular
        order = [page_id for page_id, *_ in pages][1:]
        rng.shuffle(order)
        order.insert(0, 1)
        page_cum = list(accumulate(1.0 / (rank + 1) ** 1.1 for rank in range(len(order))))
        landing_cum = list(accumulate(
            (4.0 if page_types[p] == "home" else 0.05 if page_types[p] in ("cart", "checkout") else 1.0)
            / (rank + 1) ** 0.9
            for rank, p in enumerate(order)
        ))
        campaigns = [
            (i, name, channel, source, start.strftime(DATE_FORMAT), end.strftime(DATE_FORMAT), float(budget))
            for i, (name, channel, source, start, end, budget, _) in enumerate(CAMPAIGNS, start=1)
        ]
        country_names = list(COUNTRIES)
        country_cum = list(accumulate(COUNTRIES.values()))
        referrer_names = list(REFERRERS)
        referrer_cum = list(accumulate(REFERRERS.values()))

        visitors: list[tuple] = []
        sessions: list[tuple] = []
        page_views: list[tuple] = []
        events: list[tuple] = []
        conversions: list[tuple] = []
        session_visitors: list[int] = []
        visitor_device: dict[int, int] = {}
        visitor_busy_until: dict[int, datetime] = {}

        for session_id, started in enumerate(self._session_starts(), start=1):
            started_text = started.isoformat(sep=" ")
            # a returning visitor is picked in proportion to their recent sessions (so regulars
            # stay regular), unless they are still in the middle of their previous session
            visitor_id = None
            if session_visitors and rng.random() < 0.55:
                recent = session_visitors[-RETURN_WINDOW:]
                candidate = recent[int(rng.random() * len(recent))]
                if visitor_busy_until[candidate] < started:
                    visitor_id = candidate
            if visitor_id is None:
                visitor_id = len(visitors) + 1
                country = rng.choices(country_names, cum_weights=country_cum)[0]
                visitors.append((visitor_id, started_text, country, rng.random() < 0.18))
                visitor_device[visitor_id] = rng.choices(devices, cum_weights=device_cum)[0][0]
            session_visitors.append(visitor_id)
            device_id = visitor_device[visitor_id] if rng.random() < 0.85 else \
                rng.choices(devices, cum_weights=device_cum)[0][0]

            campaign_id = None
            referrer = None
            roll = rng.random()
            if roll < 0.26:
                campaign_id = self._campaign_on(started.date())
            if campaign_id is not None:
                source = "campaign"
            elif roll < 0.55:
                source = "organic_search"
                referrer = "google.com" if rng.random() < 0.85 else "bing.com"
            elif roll < 0.66:
                source = "referral"
                referrer = rng.choices(referrer_names, cum_weights=referrer_cum)[0]
            else:
                source = "direct"

            landing = order[self._pick(landing_cum)]
            if rng.random() < 0.47:
                count = 1
            else:
                count = 2
                while rng.random() < 0.62 and count < 40:
                    count += 1
            moment = started
            duration = 0
            added_to_cart = False
            page_id = landing
            for view_number in range(1, count + 1):
                if view_number > 1:
                    page_id = order[self._pick(page_cum)]
                seconds = int(rng.lognormvariate(3.3, 1.0)) + 1
                seconds = min(seconds, 1800)
                page_views.append((len(page_views) + 1, session_id, page_id, view_number,
                                   moment.isoformat(sep=" "), seconds))
                if rng.random() < 0.32:
                    kinds = EVENT_TYPES[page_types[page_id]]
                    event_type = rng.choices(list(kinds), weights=list(kinds.values()))[0]
                    added_to_cart = added_to_cart or event_type == "add_to_cart"
                    at = moment + timedelta(seconds=int(seconds * rng.random()))
                    events.append((len(events) + 1, session_id, page_id, event_type, at.isoformat(sep=" ")))
                moment += timedelta(seconds=seconds)
                duration += seconds
            visitor_busy_until[visitor_id] = moment + timedelta(minutes=30)
            sessions.append((session_id, visitor_id, device_id, campaign_id, source, referrer,
                             landing, started_text, duration, count))

            conversion = self._conversion(count, added_to_cart, source)
            if conversion is not None:
                kind, revenue = conversion
                conversions.append((len(conversions) + 1, session_id, campaign_id, kind, revenue,
                                    moment.isoformat(sep=" ")))

        return {
            "devices": tuple(devices),
            "pages": tuple(pages),
            "campaigns": tuple(campaigns),
            "visitors": tuple(visitors),
            "sessions": tuple(sessions),
            "page_views": tuple(page_views),
            "events": tuple(events),
            "conversions": tuple(conversions),
        }

    def _pick(self, cumulative: list[float]) -> int:
        return self.rng.choices(range(len(cumulative)), cum_weights=cumulative)[0]

    def _session_starts(self) -> list[datetime]:
        rng = self.rng
        days = (END - START).days
        day_weights = []
        for offset in range(days):
            day = START + timedelta(days=offset)
            weight = 1.0 + 0.4 * offset / days  # steady growth
            weight *= 0.8 if day.weekday() >= 5 else 1.0
            if day.month == 12 and day.day <= 24:
                weight *= 1.6  # holiday shopping
            weight *= 1.0 + sum(pull * 0.35 for *_, start, end, _, pull in CAMPAIGNS
                                if start <= day.date() <= end)
            day_weights.append(weight)
        day_cum = list(accumulate(day_weights))
        hour_cum = list(accumulate([2, 1, 1, 1, 1, 1, 2, 3, 4, 5, 6, 6, 7, 7, 6, 6, 6, 7, 8, 9, 10, 9, 7, 4]))
        starts = []
        for _ in range(SESSION_COUNT):
            day = rng.choices(range(days), cum_weights=day_cum)[0]
            hour = rng.choices(range(24), cum_weights=hour_cum)[0]
            starts.append(START + timedelta(days=day, hours=hour, seconds=rng.randrange(3600)))
        starts.sort()
        return starts

    def _active_campaigns(self, day: date) -> tuple[list[int], list[float]]:
        if day not in self._campaigns_by_day:
            ids, weights = [], []
            for campaign_id, (*_, start, end, _, pull) in enumerate(CAMPAIGNS, start=1):
                if start <= day <= end:
                    ids.append(campaign_id)
                    weights.append(pull)
            self._campaigns_by_day[day] = (ids, list(accumulate(weights)))
        return self._campaigns_by_day[day]

    def _campaign_on(self, day: date) -> int | None:
        ids, cumulative = self._active_campaigns(day)
        if not ids:
            return None
        return self.rng.choices(ids, cum_weights=cumulative)[0]

    def _conversion(self, pages: int, added_to_cart: bool, source: str) -> tuple[str, float | None] | None:
        rng = self.rng
        boost = 1.4 if source == "campaign" else 1.0
        if added_to_cart and rng.random() < 0.38 * boost:
            revenue = round(min(rng.lognormvariate(math.log(12.0), 0.8), 400.0), 2)
            return "purchase", revenue
        if pages >= 3 and rng.random() < 0.012 * boost:
            return "sign_up", None
        if rng.random() < 0.004 * boost:
            return "newsletter", None
        return None
