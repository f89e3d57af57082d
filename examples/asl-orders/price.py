PRICES = {"apple": 0.5, "bread": 2.25, "cheese": 6.0}


def handle(event, context):
    """One order line: {"sku", "qty"} -> the line with its cost."""
    if event["sku"] not in PRICES:
        raise KeyError(f"no price for {event['sku']!r}")
    return {"sku": event["sku"], "qty": event["qty"], "cost": round(PRICES[event["sku"]] * event["qty"], 2)}
