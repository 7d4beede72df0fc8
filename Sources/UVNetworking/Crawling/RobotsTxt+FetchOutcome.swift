extension RobotsTxt {
    /// The rules a crawler follows after fetching `/robots.txt`, by RFC 9309 §2.3.1:
    ///
    /// - `status` nil (no response: the host could not be reached, the connection failed or
    ///   timed out): "unreachable", `disallowAll` (§2.3.1.4).
    /// - 2xx: the body is parsed (§2.3.1.1); an empty body allows everything.
    /// - 3xx: the caller follows redirects, at least five (§2.3.1.2), so a 3xx reaching here
    ///   is one redirect too many, and the RFC lets a crawler take the file as unavailable:
    ///   `allowAll`.
    /// - 4xx, 401 and 403 included: "unavailable", `allowAll` (§2.3.1.3).
    /// - 5xx: "unreachable", `disallowAll` (§2.3.1.4).
    /// - Any other number (1xx as a final status, below 100, above 599) is no answer HTTP
    ///   defines, so it counts as a server error: `disallowAll`.
    ///
    /// The RFC also lets a crawler that has found the file unreachable for a long time (30
    /// days, say) treat it as unavailable, or keep a cached copy (§2.3.1.4, §2.4); that memory
    /// is the caller's.
    public init(status: Int?, body: some Collection<UInt8>) {
        switch status {
        case .some(200...299): self.init(parsing: body)
        case .some(300...499): self = .allowAll
        default: self = .disallowAll
        }
    }
}
