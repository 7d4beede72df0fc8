extension Request {
    /// How a request uses the session's cache (`SessionConfiguration.cache`): NSURLRequest's
    /// cache policies, and the Fetch standard's cache modes (`init(fetchMode:)`) mapped onto
    /// them. Only GET responses are stored, and answer GET and HEAD requests; any other method
    /// goes to the origin, and its success invalidates what is stored for its URL (RFC 9111 §4.4).
    /// Its raw value is the case's name, as resume data keeps it.
    public enum CachePolicy: String, Sendable, Hashable, Codable {
        /// RFC 9111: a fresh stored response answers; a stale one is validated with the origin
        /// (a 304 reuses its body); the request's own Cache-Control (no-cache, no-store,
        /// max-age, max-stale, min-fresh, only-if-cached) applies. Fetch's "default".
        case useProtocolCachePolicy
        /// The origin answers, and its response is stored as usual. Fetch's "reload".
        case reloadIgnoringLocalCacheData
        /// Every stored response is validated with the origin before it is used, fresh or not.
        /// Fetch's "no-cache".
        case reloadRevalidatingCacheData
        /// A stored response answers whatever its age; the origin only when none is stored.
        /// Fetch's "force-cache".
        case returnCacheDataElseLoad
        /// A stored response answers whatever its age; with none the task fails with
        /// `NetworkingError.Code.resourceUnavailable`, without touching the network. Fetch's
        /// "only-if-cached".
        case returnCacheDataDontLoad
        /// The cache takes no part: nothing is looked up, nothing stored. Fetch's "no-store";
        /// NSURLRequest has no such policy.
        case reloadWithoutCaching

        /// The policy for a Fetch standard cache mode ("default", "no-store", "reload",
        /// "no-cache", "force-cache", "only-if-cached"); nil for any other text.
        public init?(fetchMode: String) {
            switch fetchMode {
            case "default": self = .useProtocolCachePolicy
            case "no-store": self = .reloadWithoutCaching
            case "reload": self = .reloadIgnoringLocalCacheData
            case "no-cache": self = .reloadRevalidatingCacheData
            case "force-cache": self = .returnCacheDataElseLoad
            case "only-if-cached": self = .returnCacheDataDontLoad
            default: return nil
            }
        }
    }
}
