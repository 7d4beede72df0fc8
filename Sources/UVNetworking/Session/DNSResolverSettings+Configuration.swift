extension DNSResolver.Settings {
    /// The DNS part of a session's configuration (here, in the session's layer: the transport
    /// does not know the configuration).
    init(_ configuration: SessionConfiguration) {
        self.init(cacheTTLMilliseconds: LoopDuration.clamped(configuration.dnsCacheTTL),
                  timeoutMilliseconds: LoopDuration.timeout(configuration.dnsTimeout),
                  servers: configuration.dnsServers,
                  overrides: configuration.hostAddressOverrides)
    }
}
