import CAres
import Glibc

/// Resolves host names for a session's connections without blocking the loop and without a
/// thread per look-up: c-ares sends the queries and the loop polls its sockets (`AresDriver`), so
/// a slow name waits on its own query and never in front of another. /etc/hosts comes first
/// (`HostsFileSource`, read off the loop), then DNS as resolv.conf or `dnsServers` say. Answers
/// are kept for their TTL up to `dnsCacheTTL`, "no such name" for a short while
/// (`DNSLookupBook`), and concurrent look-ups of one name share a query. Numeric hosts and
/// `hostAddressOverrides` never reach it.
///
/// Loop-confined. The channel is made on a worker at the first look-up that needs DNS (reading
/// resolv.conf is file I/O), so a session that only ever connects to IP literals pays nothing.
final class DNSResolver {
    /// The outcome of one look-up: every address, in the order to try them.
    typealias Completion = (Result<[SocketAddress], TransportError>) -> Void
    private typealias Key = DNSLookupBook<Completion>.Key

    /// What a resolver takes from the session's configuration.
    struct Settings {
        /// `dnsCacheTTL` in milliseconds: the longest an answer is reused.
        var cacheTTLMilliseconds: UInt64
        /// `dnsTimeout` in milliseconds; `.max` for none.
        var timeoutMilliseconds: UInt64 = .max
        /// `dnsServers`; empty: resolv.conf's.
        var servers: [String] = []
        /// `hostAddressOverrides`.
        var overrides: [String: String] = [:]
        /// Where the hosts file is read from.
        var hostsFile = HostsFileSource()
        /// Where resolv.conf is read from.
        var resolvConf = AresChannel.defaultResolvConf
    }

    private enum Setup {
        case notStarted
        /// The channel is being made; these queries start when it is there.
        case inProgress([(Key, UInt64)])
        case ready(AresDriver)
        case failed(TransportError)
        case closed
    }

    private let loop: EventLoop
    private let workers: WorkerPool
    private let settings: Settings
    /// Host names answered without a query (lowercased name -> IP literals, comma-separated),
    /// like curl's --resolve.
    private let overrides: [String: String]
    private var book: DNSLookupBook<Completion>
    private var setup = Setup.notStarted
    private var hosts = HostsFile()
    private var hostsStamp: HostsFileSource.Stamp?
    /// resolv.conf as the current channel read it: a change makes a new channel.
    private var resolvConfStamp: HostsFileSource.Stamp?
    /// The server list given to c-ares (`dnsServers`), nil for resolv.conf's.
    private var serverList: String?
    private var nextHostsCheck: UInt64 = .max
    private var hostsCheckRunning = false
    /// Channels a changed resolv.conf replaced, until their last queries end (closed with the
    /// resolver if they have not).
    private var retired: [AresDriver] = []
    /// The look-up timeout of each query in flight, by query number.
    private var deadlines: [UInt64: LoopTimer] = [:]

    init(loop: EventLoop, workers: WorkerPool = .shared, settings: Settings) {
        self.loop = loop
        self.workers = workers
        self.settings = settings
        self.overrides = Dictionary(settings.overrides.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.book = DNSLookupBook(policy: .init(maximumMilliseconds: settings.cacheTTLMilliseconds))
    }

    /// A resolver with no look-up timeout and resolv.conf's servers.
    convenience init(loop: EventLoop, ttlMilliseconds: UInt64, overrides: [String: String] = [:]) {
        self.init(loop: loop, settings: Settings(cacheTTLMilliseconds: ttlMilliseconds, overrides: overrides))
    }

    /// Calls `completion` once, on the loop thread; synchronously when the answer is numeric,
    /// overridden, cached or in the hosts file.
    func resolve(host: String, port: Int, completion: @escaping Completion) {
        loop.assertInLoop()
        if let numeric = SocketAddress(numericHost: host, port: port) ?? Self.shorthandIPv4(host, port: port) {
            completion(.success([numeric]))
            return
        }
        if !overrides.isEmpty, let address = overrides[host.lowercased()] {
            completion(Self.overrideAddresses(host: host, address: address, port: port))
            return
        }
        // RFC 6761 §6.4: resolver APIs answer .invalid names with "no such name" themselves.
        if host.lowercased().hasSuffix(".invalid") || host.lowercased().hasSuffix(".invalid.") {
            completion(.failure(.nameNotFound(host: host)))
            return
        }
        let key = Key(host: host, port: port)
        let (decision, answer) = book.lookUp(key, waiter: completion, now: LoopTimer.now(loop))
        switch decision {
        case .answered: completion(answer!)
        case .joined: break
        case .startQuery(let query): start(key, query: query)
        }
    }

    /// The IPv4 forms inet_aton reads besides dotted quads ("127.1", "0x7f.1", "2130706433"),
    /// which getaddrinfo accepted as numeric, and curl and browsers too; c-ares sends them to DNS.
    private static func shorthandIPv4(_ host: String, port: Int) -> SocketAddress? {
        guard let first = host.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
              host.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X") || isxdigit(Int32($0)) != 0 })
        else { return nil }
        var address = in_addr()
        guard inet_aton(host, &address) != 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return nil }
        // The text up to its NUL, decoded: `String(cString:)` on an array is deprecated.
        let length = text.firstIndex(of: 0) ?? text.count
        return SocketAddress(numericHost: String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self),
                             port: port)
    }

    /// Fails every look-up in flight and closes the channel, its sockets and timers. Look-ups
    /// after this fail at once.
    func close() {
        loop.assertInLoop()
        if case .ready(let driver) = setup { driver.close() }
        for driver in retired { driver.close() }
        retired.removeAll()
        setup = .closed
        for (_, timer) in deadlines { timer.close() }
        deadlines.removeAll()
        for waiter in book.removeAll() { waiter(.failure(.resolutionFailed(host: "", status: ARES_EDESTRUCTION))) }
    }

    // MARK: Queries

    private func start(_ key: Key, query: UInt64) {
        if settings.timeoutMilliseconds != .max {
            let timer = LoopTimer(loop: loop) { [unowned self] in self.timedOut(key, query: query) }
            timer.arm(at: LoopDuration.deadline(LoopTimer.now(loop), plus: settings.timeoutMilliseconds))
            deadlines[query] = timer
        }
        switch setup {
        case .notStarted:
            setup = .inProgress([(key, query)])
            makeChannel()
        case .inProgress(var queued):
            queued.append((key, query))
            setup = .inProgress(queued)
        case .ready(let driver):
            send(key, query: query, driver: driver)
        case .failed(let error):
            if !answerFromHostsFile(key, query: query) { finish(key, query: query, answer: .failure(error), ttlSeconds: nil) }
        case .closed:
            finish(key, query: query, answer: .failure(.resolutionFailed(host: key.host, status: ARES_EDESTRUCTION)), ttlSeconds: nil)
        }
    }

    /// The hosts file first; DNS for names it does not have.
    private func send(_ key: Key, query: UInt64, driver: AresDriver) {
        if answerFromHostsFile(key, query: query) { return }
        driver.getaddrinfo(host: key.host, port: key.port) { [self] status, addresses, ttl, tcpRefused in
            let answer = tcpRefused ? .failure(.truncatedAnswerTCPRefused(host: key.host))
                : Self.answer(key.host, status: status, addresses: addresses)
            finish(key, query: query, answer: answer, ttlSeconds: ttl)
        }
    }

    /// Answers from the hosts file when it names the host: true when it did. It comes before
    /// DNS, and so it answers even when DNS cannot be asked (a channel that could not be made).
    private func answerFromHostsFile(_ key: Key, query: UInt64) -> Bool {
        checkHostsFile()
        guard let addresses = hosts.addresses(for: key.host, port: key.port), !addresses.isEmpty else { return false }
        // Not cached: the file is in memory, and a changed file must win at once.
        finish(key, query: query, answer: .success(addresses), ttlSeconds: 0)
        return true
    }

    private static func answer(_ host: String, status: Int32, addresses: [SocketAddress]) -> Result<[SocketAddress], TransportError> {
        switch status {
        case ARES_SUCCESS: return addresses.isEmpty ? .failure(.noAddresses(host: host)) : .success(addresses)
        case ARES_ENOTFOUND, ARES_ENONAME: return .failure(.nameNotFound(host: host))
        case ARES_ENODATA: return .failure(.noAddresses(host: host))
        case ARES_ETIMEOUT: return .failure(.resolutionTimedOut(host: host, milliseconds: nil))
        default:
            if let shortage = DescriptorShortage.check(aresStatus: status) {
                return .failure(.resolutionDescriptorsExhausted(host: host, status: shortage))
            }
            return .failure(.resolutionFailed(host: host, status: status))
        }
    }

    private func finish(_ key: Key, query: UInt64, answer: Result<[SocketAddress], TransportError>, ttlSeconds: Int?) {
        deadlines.removeValue(forKey: query)?.close()
        for waiter in book.finished(key, query: query, answer: answer, ttlSeconds: ttlSeconds, now: LoopTimer.now(loop)) {
            waiter(answer)
        }
    }

    private func timedOut(_ key: Key, query: UInt64) {
        deadlines.removeValue(forKey: query)?.close()
        let error = TransportError.resolutionTimedOut(host: key.host, milliseconds: settings.timeoutMilliseconds)
        for waiter in book.timedOut(key, query: query) { waiter(.failure(error)) }
    }

    // MARK: Setup off the loop

    /// Makes the channel and reads the hosts file on a worker, then starts the queued queries.
    /// An invalid `dnsServers` entry makes no channel, but the hosts file is read all the same:
    /// the names it has still resolve.
    private func makeChannel() {
        var invalidServers: TransportError?
        if !settings.servers.isEmpty {
            switch DNSServerList.csv(settings.servers) {
            case .success(let list): serverList = list
            case .failure(let error): invalidServers = error
            }
        }
        let driver = AresDriver(loop: loop)
        let handOver = LoopBound((self, driver), loop: loop)
        let data = UncheckedPointer(driver.callbackData)
        let source = settings.hostsFile, resolvConf = settings.resolvConf, servers = serverList, invalid = invalidServers
        let loop = self.loop
        workers.run {
            let (hosts, hostsStamp) = source.load()
            let resolvConfStamp = HostsFileSource.stamp(of: resolvConf)
            let made = invalid.map { .failure($0) }
                ?? AresChannel.make(servers: servers, resolvConf: resolvConf, callback: AresDriver.socketStateCallback, data: data.pointer)
            let accepted = loop.execute {
                let (resolver, driver) = handOver.value
                switch made {
                case .success(let channel):
                    driver.attach(channel)
                    resolver.setupEnded(.success(driver), hosts: hosts, stamps: (hostsStamp, resolvConfStamp))
                case .failure(let error):
                    resolver.setupEnded(.failure(error), hosts: hosts, stamps: (hostsStamp, resolvConfStamp))
                }
            }
            // The loop has shut down: nothing will use the channel.
            if !accepted, case .success(let channel) = made { ares_destroy(channel.channel) }
        }
    }

    private func setupEnded(_ result: Result<AresDriver, TransportError>, hosts: HostsFile,
                            stamps: (hosts: HostsFileSource.Stamp?, resolvConf: HostsFileSource.Stamp?)) {
        guard case .inProgress(let queued) = setup else {
            // Closed meanwhile.
            if case .success(let driver) = result { driver.close() }
            return
        }
        self.hosts = hosts
        hostsStamp = stamps.hosts
        resolvConfStamp = stamps.resolvConf
        nextHostsCheck = LoopDuration.deadline(LoopTimer.now(loop), plus: HostsFileSource.checkInterval)
        switch result {
        case .success(let driver):
            setup = .ready(driver)
            for (key, query) in queued { send(key, query: query, driver: driver) }
        case .failure(let error):
            setup = .failed(error)
            for (key, query) in queued where !answerFromHostsFile(key, query: query) {
                finish(key, query: query, answer: .failure(error), ttlSeconds: nil)
            }
        }
    }

    /// Asks a worker whether the hosts file or resolv.conf changed, at most every
    /// `checkInterval`; the answer applies to look-ups from then on. A changed resolv.conf gets a
    /// new channel (made there, as at setup); queries sent on the old one finish on it.
    private func checkHostsFile() {
        let now = LoopTimer.now(loop)
        guard now >= nextHostsCheck, !hostsCheckRunning else { return }
        hostsCheckRunning = true
        let source = settings.hostsFile, resolvConf = settings.resolvConf, servers = serverList
        let known = (hosts: hostsStamp, resolvConf: resolvConfStamp)
        let newDriver = AresDriver(loop: loop)
        let data = UncheckedPointer(newDriver.callbackData)
        let handOver = LoopBound((self, newDriver), loop: loop)
        let loop = self.loop
        workers.run {
            let reloaded = source.reloadIfChanged(since: known.hosts)
            let resolvConfStamp = HostsFileSource.stamp(of: resolvConf)
            let remade = resolvConfStamp == known.resolvConf ? nil
                : AresChannel.make(servers: servers, resolvConf: resolvConf, callback: AresDriver.socketStateCallback, data: data.pointer)
            let accepted = loop.execute {
                let (resolver, driver) = handOver.value
                resolver.hostsCheckRunning = false
                resolver.nextHostsCheck = LoopDuration.deadline(LoopTimer.now(loop), plus: HostsFileSource.checkInterval)
                if let (hosts, stamp) = reloaded {
                    resolver.hosts = hosts
                    resolver.hostsStamp = stamp
                }
                guard case .success(let channel)? = remade else { return }
                driver.attach(channel)
                guard case .ready(let old) = resolver.setup else {
                    driver.close()
                    return
                }
                resolver.resolvConfStamp = resolvConfStamp
                resolver.setup = .ready(driver)
                old.retire()
                resolver.retired.removeAll { $0.isClosed }
                if !old.isClosed { resolver.retired.append(old) }
            }
            if !accepted, case .success(let channel)? = remade { ares_destroy(channel.channel) }
        }
    }
}

/// A raw pointer carried to a worker and back unchanged (never dereferenced there).
private struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}
