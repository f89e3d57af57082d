"""virus-scan (paper §7): store the e-mail once and fan it out to three scanners running in parallel.

The scanners get a reference (the data layer key), not the e-mail itself, as the paper suggests.
"""

import json

SCANNERS = 3


def handle(event, context):
    email = event.get("email") if isinstance(event, dict) else None
    if not isinstance(email, dict):
        raise ValueError('expected {"email": {"from": ..., "body": ..., "attachments": [...]}}')
    run = context.get_execution_id()
    context.put(f"email-{run}", json.dumps(email))
    context.createCounter(f"pending-{run}", SCANNERS)
    return {"email_key": f"email-{run}"}
