import CUV
import Glibc

/// Resolves host names with uv_getaddrinfo (which runs on libuv's threadpool, so the loop never
/// blocks) and keeps answers for a short TTL: a batch fetcher asks for the same few hosts thousands
/// of times. Numeric hosts never reach the resolver. Loop-confined.
final class DNSResolver {
    /// The outcome of one look-up: every address, in the order the system prefers.
    typealias Completion = (Result<[SocketAddress], TransportError>) -> Void

    fileprivate struct CacheKey: Hashable { var host: String; var port: Int }
    private struct CacheEntry { var addresses: [SocketAddress]; var expires: UInt64 }

    private let loop: EventLoop
    private let ttlMilliseconds: UInt64
    /// Host names answered without a query (lowercased name -> IP literals, comma-separated),
    /// like curl's --resolve.
    private let overrides: [String: String]
    private var cache: [CacheKey: CacheEntry] = [:]
    /// Look-ups in flight, so that a burst of connections to one host makes one query.
    private var pending: [CacheKey: [Completion]] = [:]

    init(loop: EventLoop, ttlMilliseconds: UInt64, overrides: [String: String] = [:]) {
        self.loop = loop
        self.ttlMilliseconds = ttlMilliseconds
        self.overrides = Dictionary(overrides.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Calls `completion` on the loop thread, synchronously when the answer is numeric or cached.
    func resolve(host: String, port: Int, completion: @escaping Completion) {
        loop.assertInLoop()
        if let numeric = SocketAddress(numericHost: host, port: port) {
            completion(.success([numeric]))
            return
        }
        if !overrides.isEmpty, let address = overrides[host.lowercased()] {
            completion(Self.overrideAddresses(host: host, address: address, port: port))
            return
        }
        let key = CacheKey(host: host, port: port)
        if let entry = cache[key] {
            if entry.expires > LoopTimer.now(loop) {
                completion(.success(entry.addresses))
                return
            }
            cache[key] = nil
        }
        if pending[key] != nil {
            pending[key]!.append(completion)
            return
        }
        pending[key] = [completion]
        Query.start(resolver: self, key: key)
    }

    fileprivate func finish(_ key: CacheKey, _ result: Result<[SocketAddress], TransportError>) {
        if case .success(let addresses) = result, ttlMilliseconds > 0 {
            cache[key] = CacheEntry(addresses: addresses, expires: LoopDuration.deadline(LoopTimer.now(loop), plus: ttlMilliseconds))
        }
        let waiters = pending.removeValue(forKey: key) ?? []
        for waiter in waiters { waiter(result) }
    }

    /// One uv_getaddrinfo request; it owns itself until the callback.
    private final class Query {
        let resolver: DNSResolver
        let key: CacheKey
        let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)

        init(resolver: DNSResolver, key: CacheKey) {
            self.resolver = resolver
            self.key = key
        }

        static func start(resolver: DNSResolver, key: CacheKey) {
            let query = Query(resolver: resolver, key: key)
            query.request.pointee.data = Unmanaged.passRetained(query).toOpaque()
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_ADDRCONFIG
            let status = uv_getaddrinfo(resolver.loop.uv, query.request, { request, status, result in
                let query = Unmanaged<Query>.fromOpaque(request!.pointee.data).takeRetainedValue()
                query.complete(status: status, result: result)
            }, key.host, nil, &hints)
            if status != 0 {
                // The callback will never run: release what we retained for it.
                Unmanaged<Query>.fromOpaque(query.request.pointee.data).release()
                query.complete(status: status, result: nil)
            }
        }

        func complete(status: Int32, result: UnsafeMutablePointer<addrinfo>?) {
            defer {
                if let result { uv_freeaddrinfo(result) }
                request.deallocate()
            }
            guard status == 0 else {
                resolver.finish(key, .failure(.resolutionFailed(host: key.host, status: status)))
                return
            }
            var addresses: [SocketAddress] = []
            var cursor = result
            while let info = cursor {
                if let address = info.pointee.ai_addr, let socketAddress = SocketAddress(address, port: key.port),
                   !addresses.contains(socketAddress) {
                    addresses.append(socketAddress)
                }
                cursor = info.pointee.ai_next
            }
            if addresses.isEmpty {
                resolver.finish(key, .failure(.noAddresses(host: key.host)))
            } else {
                resolver.finish(key, .success(addresses))
            }
        }
    }
}
