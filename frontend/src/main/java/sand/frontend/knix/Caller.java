package sand.frontend.knix;

import sand.frontend.internal.Call;

/** Who is calling: the account, its key, and the call (for the endpoints' base URL). */
record Caller(String account, String token, Call call) {}
