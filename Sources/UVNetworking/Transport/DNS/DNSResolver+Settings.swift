extension DNSResolver.Settings {
    /// The DNS part of a session's configuration.
    init(_ configuration: SessionConfiguration) {
        self.init(cacheTTLMilliseconds: LoopDuration.clamped(configuration.dnsCacheTTL),
                  timeoutMilliseconds: LoopDuration.timeout(configuration.dnsTimeout),
                  servers: configuration.dnsServers,
                  overrides: configuration.hostAddressOverrides)
    }
}
