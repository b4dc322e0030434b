"""What each demo database is about, in words a router or a person can match questions against."""

from __future__ import annotations

import attrs


@attrs.frozen
class DemoDatasource:
    """One demo database: its name, a one-paragraph description and five sample questions."""

    name: str
    description: str
    sample_questions: tuple[str, ...] = attrs.field(converter=tuple)


DEMO_DATASOURCES: dict[str, DemoDatasource] = {
    "chinook": DemoDatasource(
        name="chinook",
        description=(
            "Chinook, a digital music store: the catalogue of artists, albums and tracks (with "
            "genre, media type, composer, length in milliseconds, size and unit price), the "
            "store's playlists, its employees and who reports to whom, its 59 customers with "
            "their assigned sales support representative, and the sales, as invoices (date, "
            "billing address and country, total) with one invoice line per track bought. "
            "Invoices run from 2007 to 2011."
        ),
        sample_questions=(
            "Which five artists have the most tracks in the catalogue?",
            "What were total invoice sales per billing country, highest first?",
            "Which music genre has the longest average track length?",
            "How many tracks are on each playlist?",
            "Which employee's customers spent the most on invoices in 2010?",
        ),
    ),
    "support": DemoDatasource(
        name="support",
        description=(
            "The music store's customer support desk: the same 59 customers as Chinook (with "
            "their plan), the products they ask about, support teams and the agents in them, "
            "tickets (customer, product, assigned agent, priority, status, channel, subject, "
            "created, first response and resolved times), each ticket's event history (replies, "
            "assignments and status changes), the service-level targets per priority, and the "
            "satisfaction ratings (1 to 5, with an optional comment) customers gave to resolved "
            "tickets. Tickets run from 2007 to 2011."
        ),
        sample_questions=(
            "How many support tickets are still open or pending, by priority?",
            "What is the average satisfaction rating for each support team?",
            "Which support agents resolved the most tickets in 2011?",
            "What share of urgent tickets missed their first-response SLA target?",
            "Which product gets the most support tickets through the chat channel?",
        ),
    ),
    "webanalytics": DemoDatasource(
        name="webanalytics",
        description=(
            "Web analytics for the music store's website, July to December 2011: visitors "
            "(country, first visit, registered or not), their sessions (device, traffic source, "
            "referring site, marketing campaign, landing page, start time, duration and number "
            "of pages), every page view with time on page, on-page events such as previews "
            "played and items added to the cart, the marketing campaigns with channel, dates "
            "and budget, the devices (type, operating system, browser) and the conversions "
            "(purchases with revenue, sign-ups, newsletter subscriptions)."
        ),
        sample_questions=(
            "Which ten website pages got the most page views?",
            "What is the bounce rate of website sessions for each device type?",
            "Which marketing campaign brought in the most conversion revenue?",
            "How many website sessions came from each traffic source per month?",
            "What is the average session duration on mobile compared with desktop?",
        ),
    ),
}
"""The demo's three databases by name, as `pytest-nl2sql init --demo` describes them."""
