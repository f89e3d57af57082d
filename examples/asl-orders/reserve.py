STOCK = 100  # what a product starts with


def handle(event, context):
    """Reserve the stock of every line: a counter per product in the workflow's data layer."""
    for line in event["lines"]:
        counter = "stock." + line["sku"]
        if context.getCounterValue(counter) is None:
            context.createCounter(counter, STOCK)
        context.decrementCounter(counter, line["qty"])
    return {"reserved": {line["sku"]: context.getCounterValue("stock." + line["sku"]) for line in event["lines"]}}
