import Dispatch
import Foundation
import HTTPTypes

/// AFHTTPSessionManager: a session manager with a base URL, a request serializer and the HTTP
/// verbs. Each verb serializes its parameters on the caller's thread, starts the task and returns
/// it; `success` or `failure` then runs once on the completion queue.
public final class HTTPSessionManager: SessionManager, @unchecked Sendable {
    // @unchecked: the request serializer is guarded by `serializerLock`; the rest is immutable or
    // inherited (and guarded there).

    /// The URL that relative URL strings resolve against; a non-empty path always ends in "/".
    public let baseURL: URL?

    private let serializerLock = NSLock()
    private var _requestSerializer: HTTPRequestSerializer = HTTPRequestSerializer()

    /// Turns the verbs' parameters into requests. Defaults to `HTTPRequestSerializer` (form and
    /// query-string encoding); set a `JSONRequestSerializer` for JSON bodies.
    public var requestSerializer: HTTPRequestSerializer {
        get { serializerLock.withLock { _requestSerializer } }
        set { serializerLock.withLock { _requestSerializer = newValue } }
    }

    /// Success: the task and the serialized response object.
    public typealias Success = @Sendable (DataTask, Any?) -> Void
    /// Failure: the task (nil when no task could be made: the request did not serialize) and the error.
    public typealias Failure = @Sendable (DataTask?, any Error) -> Void

    /// A manager whose relative URL strings resolve against `baseURL`.
    public init(baseURL: URL? = nil, configuration: SessionConfiguration = .default,
                loop: EventLoop = .shared, workers: WorkerPool = .shared) {
        self.baseURL = baseURL.map(BaseURL.normalized)
        super.init(configuration: configuration, loop: loop, workers: workers)
    }

    /// A manager whose relative URL strings resolve against `baseURL`, over the loops of `group`
    /// (see `SessionManager.init(configuration:group:workers:)`).
    public init(baseURL: URL? = nil, configuration: SessionConfiguration = .default,
                group: EventLoopGroup, workers: WorkerPool = .shared) {
        self.baseURL = baseURL.map(BaseURL.normalized)
        super.init(configuration: configuration, group: group, workers: workers)
    }

    /// Replaces the default security policy. A policy that pins (any mode but `.none`) is
    /// refused unless `baseURL` is https, as AFNetworking refused it (it raised an exception):
    /// pins on a manager that speaks plain http would protect nothing.
    public override func setSecurityPolicy(_ policy: SecurityPolicy) throws(NetworkingError) {
        if policy.pinningMode != .none && baseURL?.scheme?.lowercased() != "https" {
            throw NetworkingError(.unsupportedURL, "a security policy with pinning mode \(policy.pinningMode) needs an https baseURL, not \(baseURL?.absoluteString ?? "none")",
                                  failingURL: baseURL)
        }
        try super.setSecurityPolicy(policy)
    }

    // MARK: Verbs

    /// GET: parameters go to the query string.
    @discardableResult
    public func get(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                    downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                    success: Success?, failure: Failure?) -> DataTask? {
        start(.get, urlString, parameters, headers, nil, downloadProgress, success, failure)
    }

    /// HEAD: success gets only the task (a HEAD response has no body to serialize).
    @discardableResult
    public func head(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                     success: (@Sendable (DataTask) -> Void)?, failure: Failure?) -> DataTask? {
        var taskOnly: Success?
        if let success { taskOnly = { task, _ in success(task) } }
        return start(.head, urlString, parameters, headers, nil, nil, taskOnly, failure)
    }

    /// POST: parameters go to the body.
    @discardableResult
    public func post(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                     uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                     success: Success?, failure: Failure?) -> DataTask? {
        start(.post, urlString, parameters, headers, uploadProgress, nil, success, failure)
    }

    /// POST with a multipart/form-data body: `parameters` become text fields, then
    /// `constructingBody` adds parts (files, data, streams). The body streams from disk in bounded
    /// memory with an exact Content-Length. An error thrown by `constructingBody` (a missing file,
    /// say) makes no task and reaches `failure(nil, error)` on the completion queue.
    @discardableResult
    public func post(_ urlString: String, parameters: [String: Any]? = nil, headers: [String: String]? = nil,
                     constructingBody: (MultipartFormData) throws -> Void,
                     uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                     success: Success?, failure: Failure?) -> DataTask? {
        let request: Request
        do {
            request = try applying(headers, to: requestSerializer.multipartFormRequest(
                method: .post, urlString: resolve(urlString), parameters: parameters, constructingBody: constructingBody))
        } catch {
            deliverSerializationFailure(error, to: failure)
            return nil
        }
        let task = dataTask(with: request, uploadProgress: uploadProgress, success: success, failure: failure)
        task.resume()
        return task
    }

    /// PUT: parameters go to the body.
    @discardableResult
    public func put(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                    success: Success?, failure: Failure?) -> DataTask? {
        start(.put, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// PATCH: parameters go to the body.
    @discardableResult
    public func patch(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                      success: Success?, failure: Failure?) -> DataTask? {
        start(.patch, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// DELETE: parameters go to the query string (AFNetworking's rule).
    @discardableResult
    public func delete(_ urlString: String, parameters: Any? = nil, headers: [String: String]? = nil,
                       success: Success?, failure: Failure?) -> DataTask? {
        start(.delete, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// A task for any method, not yet started (call `resume()`), like AFNetworking's public
    /// dataTaskWithHTTPMethod. Nil when the request does not serialize; `failure` then gets
    /// (nil, error) on the completion queue.
    public func dataTask(httpMethod method: HTTPRequest.Method, urlString: String, parameters: Any? = nil,
                         headers: [String: String]? = nil,
                         uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                         downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                         success: Success?, failure: Failure?) -> DataTask? {
        let request: Request
        do {
            request = try makeRequest(method, urlString, parameters, headers)
        } catch {
            deliverSerializationFailure(error, to: failure)
            return nil
        }
        return dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                        success: success, failure: failure)
    }

    // MARK: Building requests

    /// The URL resolved against `baseURL`, serialized, then `headers` applied over whatever the
    /// serializer set.
    func makeRequest(_ method: HTTPRequest.Method, _ urlString: String, _ parameters: Any?,
                     _ headers: [String: String]?) throws -> Request {
        applying(headers, to: try requestSerializer.request(method: method, urlString: resolve(urlString), parameters: parameters))
    }

    /// `urlString` resolved against `baseURL`, as an absolute URL string.
    func resolve(_ urlString: String) throws -> String {
        guard let url = BaseURL.resolve(urlString, against: baseURL) else {
            throw NetworkingError(.invalidURL, "\"\(urlString)\" is not a URL (base: \(baseURL?.absoluteString ?? "none"))")
        }
        return url.absoluteString
    }

    /// Per-request headers go on last, over whatever the serializer set.
    func applying(_ headers: [String: String]?, to request: Request) -> Request {
        var request = request
        for (name, value) in headers ?? [:] { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// A task whose completion calls `success` or `failure`.
    func dataTask(with request: Request, uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                          downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                          success: Success?, failure: Failure?) -> DataTask {
        // The handler needs the task, which does not exist yet when the handler is made.
        let box = TaskBox()
        let task = dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress) { _, object, error in
            let task = box.take()
            if let error {
                failure?(task, error)
            } else if let task {
                success?(task, object)
            }
        }
        box.set(task)
        return task
    }

    private func start(_ method: HTTPRequest.Method, _ urlString: String, _ parameters: Any?, _ headers: [String: String]?,
                       _ uploadProgress: (@Sendable (Progress) -> Void)?, _ downloadProgress: (@Sendable (Progress) -> Void)?,
                       _ success: Success?, _ failure: Failure?) -> DataTask? {
        let task = dataTask(httpMethod: method, urlString: urlString, parameters: parameters, headers: headers,
                            uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
        task?.resume()
        return task
    }

    /// AFNetworking's rule: no task, and failure(nil, error) asynchronously on the completion
    /// queue, inside the completion group.
    func deliverSerializationFailure(_ error: any Error, to failure: Failure?) {
        guard let failure else { return }
        let target = deliverySnapshot()
        let sendable = SendableError(error)
        target.queue.async(group: target.group) { failure(nil, sendable.error) }
    }
}

/// Hands a task to its own completion handler, which is made before the task exists.
private final class TaskBox: @unchecked Sendable {
    // @unchecked: set once before the task can complete (it is created suspended), read once on
    // completion; the lock orders the two.
    private let lock = NSLock()
    private var task: DataTask?
    func set(_ task: DataTask) { lock.withLock { self.task = task } }
    /// The task, released from the box so the handler does not keep it alive.
    func take() -> DataTask? { lock.withLock { defer { task = nil }; return task } }
}

/// An error crossing to the completion queue: errors thrown by serializers are values the caller
/// gets and owns from then on.
private struct SendableError: @unchecked Sendable {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}
