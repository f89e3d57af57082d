class CardDeclined(Exception):
    pass


def handle(event, context):
    """Charge the order's total; a card of the customer "mallory" is always declined."""
    if event["customer"] == "mallory":
        raise CardDeclined(f"card of {event['customer']} declined for {event['total']}")
    context.log(f"charged {event['total']} to {event['customer']}")
    return {"charged": event["total"]}
