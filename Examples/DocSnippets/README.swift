// Generated from README.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking
import Logging
import ServiceLifecycle
import UVNetworkingServiceLifecycle

// README.md, swift block 1
func readme_1() {
    let manager = SessionManager()                          // SessionConfiguration.default
    manager.responseSerializer = JSONResponseSerializer()   // the default, as in AFNetworking
    manager.responseSerializer.acceptableContentTypes = ["application/json", "text/plain"]

    let task = manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:8080/get")!)) { response, object, error in
        if let error = error as? NetworkingError {
            print(error.code, error.detail, error.responseData ?? Data())   // a failed response's body is in the error
        } else {
            print(response!.status, object ?? "no body")
        }
    }
    task.resume()                                           // tasks are created suspended
    _ = manager
    _ = task
}

// README.md, swift block 2
func readme_2() {
    // main.swift of a program that fetches the URLs given as its arguments
    let manager = SessionManager()
    let done = DispatchGroup()
    for argument in CommandLine.arguments.dropFirst() {
        guard let url = URL(string: argument) else { continue }
        done.enter()
        manager.dataTask(with: Request(url: url)) { response, _, error in
            print(response?.status.code ?? 0, url, error.map { "\($0)" } ?? "ok")
            done.leave()
        }.resume()
    }
    done.notify(queue: .main) { exit(0) }   // once the last handler has run
    _ = manager
    _ = done
    dispatchMain()                          // runs the handlers, on the main queue; never returns
}

// README.md, swift block 3
func readme_3() {
    let manager = SessionManager()
    manager.completionQueue = DispatchQueue(label: "handlers")   // handlers no longer need the main queue
    let done = DispatchGroup()
    done.enter()
    manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:8080/get")!)) { response, _, _ in
        print(response?.status.code ?? 0)
        done.leave()
    }.resume()
    done.wait()                                                  // the main thread waits here
    _ = manager
    _ = done
}

// README.md, swift block 4
func readme_4() {
    let manager = SessionManager()
    manager.deliversOnEventLoop = true                      // off by default; completionGroup still holds
    manager.responseSerializer = HTTPResponseSerializer()   // parsing serializers still run on the worker pool
    let request = Request(url: URL(string: "http://127.0.0.1:8080/get")!)

    @Sendable func fetch(_ remaining: Int) {
        guard remaining > 0 else { return }
        manager.dataTask(with: request) { response, _, _ in
            print(response?.status.code ?? 0)               // quick, non-blocking work only
            fetch(remaining - 1)                            // starts inline, on the loop
        }.resume()
    }
    fetch(1_000)
    _ = manager
    _ = request
}

// README.md, swift block 5
func readme_5() async throws {
    struct User: Decodable, Sendable {
        let id: Int
        let name: String
    }

    let api = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
    let response = try await api.get("get", parameters: ["q": "1"])    // DataResponse
    print(response.statusCode, response.value ?? "no body", response.data.count)
    let page = try await api.get("html", responseSerializer: HTTPResponseSerializer())  // any body, this call
    print(page.data.count)
    let user = try await api.get("users/1", as: User.self)            // decoded on the worker pool
    print(user.name)

    let (head, body) = try await api.bytes(for: Request(url: URL(string: "http://127.0.0.1:8080/large")!))
    var received = 0
    for try await chunk in body { received += chunk.count }            // at most 256 KiB buffered
    print(head.status, received)
    _ = api
    _ = response
    _ = page
    _ = user
    _ = received
}

// README.md, swift block 6
func readme_6() {
    let api = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/v1")!)  // resolves "users" to /v1/users
    api.requestSerializer = JSONRequestSerializer()                                  // form encoding is the default
    api.requestSerializer.setAuthorizationHeaderField(username: "user", password: "secret")
    api.post("users", parameters: ["name": "Ada", "tags": ["a", "b"]], headers: ["X-Trace": "1"],
             success: { task, object in print(object ?? "no body") },
             failure: { task, error in print(error) })                               // task is nil if the request did not serialize
    _ = api
}

// README.md, swift block 7
func readme_7() async throws {
    struct NewUser: Encodable, Sendable {
        let name: String
        let tags: [String]
    }

    let api = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/v1")!)
    api.requestSerializer = JSONRequestSerializer()
    let created = try await api.post("users", parameters: NewUser(name: "Ada", tags: ["a", "b"]))
    print(created.statusCode, created.value ?? "no body")
    _ = api
    _ = created
}

// README.md, swift block 8
func readme_8() async {
    let manager = SessionManager()
    await manager.shutdown(gracePeriod: .seconds(10)) // no new tasks; running ones get 10 s, then are cancelled
    await EventLoop.shared.shutdown() // ends what still runs with .loopShutDown, stops the thread
    await WorkerPool.shared.shutdown()
    _ = manager
}

// README.md, swift block 9
func readme_9() async throws {
    let manager = SessionManager(configuration: .default, group: EventLoopGroup.shared) // a loop per core
    let group = try EventLoopGroup(loopCount: 4)                  // or a group of your own
    await group.shutdown()                                        // stops all of its loops
    _ = manager
    _ = group
}

// README.md, swift block 10
func readme_10() async throws {
    let worker = SessionManagerService(manager: SessionManager()) // stands for your own services
    let logger = Logger(label: "my-service")
    var configuration = SessionConfiguration()
    configuration.backgroundActivityLogger = logger // nil (the default): the library logs nothing
    // configuration.metricsFactory and .tracer: nil means MetricsSystem's and InstrumentationSystem's
    let manager = SessionManager(configuration: configuration)

    var perRequest = Request(url: URL(string: "http://127.0.0.1:8080/get")!)
    perRequest.logger = logger // this task's lines go to its own logger, with its task id

    let group = ServiceGroup(configuration: ServiceGroupConfiguration(
        services: [SessionManagerService(manager: manager, gracePeriod: .seconds(10)), worker],
        gracefulShutdownSignals: [.sigterm],
        logger: logger))
    try await group.run() // on SIGTERM: the manager takes no new task and lets running ones finish
    _ = worker
    _ = logger
    _ = configuration
    _ = manager
    _ = perRequest
    _ = group
}

// README.md, swift block 11
func readme_11() async throws {
    let manager = SessionManager()
    @Sendable func chunks() -> AsyncStream<[UInt8]> { AsyncStream { $0.finish() } }
    let upload = Request(url: URL(string: "http://127.0.0.1:8080/upload")!, method: .post)
    // The factory runs once per attempt, so a retry or a 307 sends the body again from its start.
    let body = StreamedBody(length: nil) { chunks() } // no length: sent chunked
    let uploaded = try await manager.upload(for: upload, body: body)
    print(uploaded.statusCode)
    _ = manager
    _ = upload
    _ = body
    _ = uploaded
}

// README.md, swift block 12
func readme_12() {
    let manager = SessionManager()
    manager.dataTaskDidReceiveResponse = { task, response in response.status == .ok ? .allow : .cancel }
    manager.dataTaskDidReceiveData = { task, chunk in print(chunk.count) }        // in order, before completion
    manager.taskDidSendBodyData = { task, sent, totalSent, totalExpected in }
    manager.taskDidFinishCollectingMetrics = { task, metrics in print(metrics.taskInterval.duration) }
    manager.taskDidComplete = { task, error in }                                  // transport error only
    manager.postsTaskNotifications = true   // .networkingTaskDidResume / DidSuspend / DidComplete on the main queue
    _ = manager
}

// README.md, swift block 13
func readme_13() {
    var configuration = SessionConfiguration()
    configuration.delayPerHost = 1                      // wget --wait=1, per origin
    configuration.maximumConnectionsPerHost = 1         // and one request at a time
    let manager = SessionManager(configuration: configuration)
    _ = configuration
    _ = manager
}

// README.md, swift block 14
func readme_14() async throws {
    let robots = RobotsTxt(status: 200, body: Array("User-agent: *\nDisallow: /private\n".utf8))
    let rules = robots.rules(for: RobotsTxt.productToken(fromUserAgent: "MyCrawler/1.0"))
    let allowed = rules.isAllowed(URL(string: "https://example.com/private/x")!)   // false

    let policy = RetryPolicy(retryLimit: 3)
    let request = Request(url: URL(string: "https://example.com/")!)
    let busy = HTTPResponse(status: .tooManyRequests, headerFields: [.retryAfter: "2"])
    switch policy.retryDecision(for: request, attempt: 1, response: busy, error: nil, now: Date()) {
    case .retry(let seconds, let serverAsked): print("again in \(seconds) s; for the whole origin: \(serverAsked)")
    case .doNotRetry: print("final")
    }
    _ = allowed

    let crawler = try RobotsCache(userAgent: "MyCrawler/1.0")
    let page = URL(string: "https://example.com/articles/1")!
    if await crawler.isAllowed(page) {
        let delay = await crawler.rules(for: page).crawlDelay ?? 0   // seconds between this origin's requests
        _ = delay
    }

    var retrying = SessionConfiguration()
    retrying.retrier = policy                           // or a RequestRetrier of your own
    let patient = HTTPSessionManager(baseURL: URL(string: "https://example.com/api/"), configuration: retrying)
    _ = patient
    _ = robots
    _ = rules
    _ = allowed
    _ = policy
    _ = request
    _ = busy
    _ = crawler
    _ = page
    _ = retrying
    _ = patient
}

// README.md, swift block 15
func readme_15() throws {
    var cached = SessionConfiguration()
    cached.cache = try HTTPCache(memoryCapacity: 16 << 20, diskCapacity: 256 << 20,
                                 directory: FileManager.default.temporaryDirectory.appendingPathComponent("http-cache"))
    let api = HTTPSessionManager(baseURL: URL(string: "https://example.com/api/"), configuration: cached)
    api.requestSerializer.cachePolicy = .returnCacheDataElseLoad   // offline-first: stale beats nothing
    api.dataTaskWillCacheResponse = { _, proposed in
        proposed.response.status.code == 200 ? proposed : nil        // keep only 200s
    }
    _ = cached
    _ = api
}

// README.md, swift block 16
func readme_16() {
    var busy = SessionConfiguration()
    busy.maximumConnectionsPerHost = 4
    let batch = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"), configuration: busy)
    batch.requestSerializer.httpShouldUsePipelining = true   // up to 8 requests on each of 4 connections
    batch.requestSerializer.networkServiceType = .background
    batch.requestSerializer.allowsCellularAccess = false
    _ = busy
    _ = batch
}

// README.md, swift block 17
func readme_17() throws {
    var configuration = SessionConfiguration()
    configuration.maximumConnections = 512              // across every origin
    configuration.dnsServers = ["127.0.0.1:5353"]       // instead of resolv.conf's
    configuration.dnsTimeout = 3                        // NetworkingError.Code.dnsTimeout past it
    let group = try EventLoopGroup(loopCount: 2)
    let manager = SessionManager(configuration: configuration, group: group)
    _ = configuration
    _ = group
    _ = manager
}

// README.md, swift block 18
func readme_18() {
    var configuration = SessionConfiguration()
    configuration.cookieStore = CookieStore()           // or CookieStore.shared, NSHTTPCookieStorage's role
    let manager = SessionManager(configuration: configuration)
    var request = Request(url: URL(string: "http://127.0.0.1:8080/cookies")!)
    request.httpShouldHandleCookies = false             // this request neither sends nor stores cookies
    _ = configuration
    _ = manager
    _ = request
}

// README.md, swift block 19
func readme_19() {
    let manager = SessionManager()
    let upload = Request(url: URL(string: "http://127.0.0.1:8080/put")!, method: .put)
    manager.uploadTask(with: upload, fromFile: URL(fileURLWithPath: "big.iso"), progress: { print($0.fractionCompleted) }) { response, _, error in
        print(response?.status.code ?? 0, error.map { "\($0)" } ?? "uploaded")
    }.resume()

    let request = Request(url: URL(string: "http://127.0.0.1:8080/bytes/1048576")!)
    let download = manager.downloadTask(with: request, destination: { temporary, response in
        URL(fileURLWithPath: "/tmp/bytes.bin")                    // where the file goes once complete
    }) { response, file, error in
        print(file?.path ?? "no file", error.map { "\($0)" } ?? "downloaded")
    }
    download.resume()
    download.cancel { resumeData in                               // nil when the server gave no validator
        guard let resumeData else { return }
        try? manager.downloadTask(withResumeData: resumeData) { response, file, error in }.resume()
    }
    _ = manager
    _ = upload
    _ = request
    _ = download
}

// README.md, swift block 20
func readme_20() throws {
    var configuration = SessionConfiguration()
    configuration.tls.additionalTrustedCAFiles = ["/etc/myorg/ca.pem"]                  // curl's --cacert
    configuration.tls.clientIdentity = try ClientIdentity.pkcs12(file: "me.p12", password: "secret") // mutual TLS
    let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1/"), configuration: configuration)

    var policy = SecurityPolicy(pinningMode: .publicKey)
    policy.pinnedPublicKeyHashes = ["hY6ZBo1w2s0f3wxXJ+0Di7Vl9bJzbqaT4d4jFz5YJ9M="]      // base64 SHA-256 of the SPKI
    try manager.setSecurityPolicy(policy)                        // throws: pinning needs an https baseURL and a pin
    try manager.setSecurityPolicy(.default, forHost: "cdn.example.com")    // per-host policies
    _ = configuration
    _ = manager
    _ = policy
}

// README.md, swift block 21
func readme_21() {
    let reachability = NetworkReachabilityManager.shared       // a default route? (or init(domain:), init?(address:))
    reachability.statusChangeQueue = DispatchQueue(label: "reachability")   // nil: the main queue, as in AFNetworking
    reachability.setReachabilityStatusChangeHandler { status in print(status.localizedDescription) }
    reachability.startMonitoring()                             // one netlink socket until stopMonitoring()
    _ = reachability
}
