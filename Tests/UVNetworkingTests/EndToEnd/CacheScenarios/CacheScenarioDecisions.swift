/// The web-platform-tests' HTTP cache scenarios that do not apply to this client's private
/// cache, each with the reason (docs/conformance.md, "HTTP cache scenarios", has the same
/// list). All eleven are RFC MAYs (the corpus marks them `optional`); every other scenario must
/// pass.
enum CacheScenarioDecisions {
    private static let partial = "RFC 9111 §3.3/§3.4 MAY: this cache stores no partial (206) response and answers no Range "
        + "request from a stored one; a Range request bypasses it and goes to the origin"
    private static let postPatch = "RFC 9110 §9.3.3 MAY: a POST or PATCH response is never stored for a later GET, even with "
        + "a Content-Location equal to its target; a successful POST or PATCH invalidates instead"
    private static let conditional = "Fetch-specific: a browser sends a request carrying its own validators in mode no-store, "
        + "with Cache-Control and Pragma no-cache; this cache bypasses such a request and leaves its fields as the caller set "
        + "them, so a CDN may still answer its If-None-Match (what uvfetch --since relies on)"

    /// "file/id" to the reason it is left out.
    static let leftOut: [String: String] = [
        "partial/http-cache-stores-partial-content-and-reuses-it": partial,
        "partial/http-cache-stores-complete-response-and-serves-smaller-ranges-from-it-byte-range-spec": partial,
        "partial/http-cache-stores-complete-response-and-serves-smaller-ranges-from-it-absent-last-byte-pos": partial,
        "partial/http-cache-stores-complete-response-and-serves-smaller-ranges-from-it-suffix-byte-range-sp": partial,
        "partial/http-cache-stores-partial-response-and-serves-smaller-ranges-from-it-byte-range-spec": partial,
        "partial/http-cache-stores-partial-response-and-serves-smaller-ranges-from-it-absent-last-byte-pos": partial,
        "partial/http-cache-stores-partial-response-and-serves-smaller-ranges-from-it-suffix-byte-range-spe": partial,
        "partial/http-cache-stores-partial-content-and-completes-it": partial,
        "post-patch/http-cache-uses-content-after-patch-request-with-response-containing-content-location-and-": postPatch,
        "post-patch/http-cache-uses-content-after-post-request-with-response-containing-content-location-and-c": postPatch,
        "if-none-match/setting-if-none-match-results-in-cache-control-no-cache-and-pragma-no-cache": conditional,
    ]
}
