/**
 * The frontend's plumbing, not its API: the router and its calls and replies, JSON, errors, throttles, body
 * budgets, the loopback client and random ids. Public only so the frontend's subpackages can share it; nothing
 * outside the frontend module should use it.
 */
package sand.frontend.internal;
