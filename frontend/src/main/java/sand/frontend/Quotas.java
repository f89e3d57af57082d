package sand.frontend;

import sand.frontend.internal.ApiException;

/**
 * What one account may keep, set by the operator (frontend settings quota.*), checked against the cluster state
 * when something new is created: a new application name, a new grain name. 403 quota_exceeded says which quota
 * and what to do; replacing what exists (a new version, a redeploy) is never refused.
 *
 * @param appsPerAccount   most applications of one account
 * @param grainsPerScope   most grains an account shares, and most grains of its own one application has
 */
record Quotas(int appsPerAccount, int grainsPerScope) {
  static final Quotas DEFAULTS = new Quotas(100, 1000);

  static ApiException exceeded(String what, int quota, String fix) {
    return new ApiException(
        403, "quota_exceeded", what + " (quota " + quota + ", set by the operator); " + fix);
  }
}
