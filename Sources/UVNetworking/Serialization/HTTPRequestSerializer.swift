import Foundation
import HTTPTypes
import Synchronization

/// Encodes parameters as a query string, in the URL for GET, HEAD and DELETE and as an
/// `application/x-www-form-urlencoded` body otherwise, and adds default headers, like
/// AFHTTPRequestSerializer.
///
/// Every property may be read and changed from any thread. Subclasses that override
/// `serialize(_:parameters:)` start from `applyingDefaults(to:)`, as the JSON and property list
/// serializers do.
///
/// Of AFNetworking's request properties `timeoutInterval`, `httpShouldHandleCookies`,
/// `cachePolicy`, `networkServiceType`, `httpShouldUsePipelining` and `allowsCellularAccess`
/// exist here, each applied only when set.
open class HTTPRequestSerializer: RequestSerializer, @unchecked Sendable {
    // @unchecked: the only mutable state is `state`, behind a Mutex.

    /// Builds the query string for a request and its (non-nil) parameters.
    public typealias QueryStringSerialization = @Sendable (Request, Any) throws -> String

    private struct State {
        var headers: [(name: String, value: String)]
        var stringEncoding: String.Encoding = .utf8
        var timeoutInterval: TimeInterval?
        var httpShouldHandleCookies: Bool?
        var cachePolicy: Request.CachePolicy?
        var networkServiceType: NetworkServiceType?
        var httpShouldUsePipelining: Bool?
        var allowsCellularAccess: Bool?
        var methodsEncodingParametersInURI: Set<HTTPRequest.Method> = [.get, .head, .delete]
        var queryStringSerialization: QueryStringSerialization?
    }

    private let state: Mutex<State>

    /// A serializer with AFNetworking's defaults: Accept-Language and User-Agent headers, UTF-8,
    /// parameters in the URI for GET, HEAD and DELETE.
    public init() {
        state = Mutex(State(headers: [("Accept-Language", Self.acceptLanguage(for: Locale.preferredLanguages)),
                                      ("User-Agent", Self.defaultUserAgent)]))
    }

    // MARK: Settings

    /// The encoding of form bodies. UTF-8 by default. The query string itself is ASCII unless a
    /// custom `setQueryStringSerialization(_:)` closure returns otherwise.
    public var stringEncoding: String.Encoding {
        get { state.withLock { $0.stringEncoding } }
        set { state.withLock { $0.stringEncoding = newValue } }
    }

    /// The inactivity timeout (`Request.timeoutInterval`) given to serialized requests; nil leaves
    /// each request's own.
    public var timeoutInterval: TimeInterval? {
        get { state.withLock { $0.timeoutInterval } }
        set { state.withLock { $0.timeoutInterval = newValue } }
    }

    /// The `httpShouldHandleCookies` given to serialized requests; nil (the default) leaves each
    /// request's own, which is true unless changed. Like AFNetworking, only a value set here is
    /// copied.
    public var httpShouldHandleCookies: Bool? {
        get { state.withLock { $0.httpShouldHandleCookies } }
        set { state.withLock { $0.httpShouldHandleCookies = newValue } }
    }

    /// The `Request.cachePolicy` given to serialized requests (AFNetworking's `cachePolicy`);
    /// nil (the default) leaves each request's own, `.useProtocolCachePolicy` unless changed.
    /// It matters only in a session with a cache (`SessionConfiguration.cache`).
    public var cachePolicy: Request.CachePolicy? {
        get { state.withLock { $0.cachePolicy } }
        set { state.withLock { $0.cachePolicy = newValue } }
    }

    /// The `Request.networkServiceType` given to serialized requests (AFNetworking's
    /// `networkServiceType`); nil (the default) leaves each request's own, `.default` unless
    /// changed.
    public var networkServiceType: NetworkServiceType? {
        get { state.withLock { $0.networkServiceType } }
        set { state.withLock { $0.networkServiceType = newValue } }
    }

    /// The `Request.httpShouldUsePipelining` given to serialized requests (AFNetworking's
    /// `HTTPShouldUsePipelining`); nil (the default) leaves each request's own, false unless
    /// changed.
    public var httpShouldUsePipelining: Bool? {
        get { state.withLock { $0.httpShouldUsePipelining } }
        set { state.withLock { $0.httpShouldUsePipelining = newValue } }
    }

    /// The `Request.allowsCellularAccess` given to serialized requests (AFNetworking's
    /// `allowsCellularAccess`); nil (the default) leaves each request's own, true unless
    /// changed.
    public var allowsCellularAccess: Bool? {
        get { state.withLock { $0.allowsCellularAccess } }
        set { state.withLock { $0.allowsCellularAccess = newValue } }
    }

    /// Methods whose parameters go in the URL's query rather than the body.
    /// AFNetworking's default: GET, HEAD, DELETE.
    public var httpMethodsEncodingParametersInURI: Set<HTTPRequest.Method> {
        get { state.withLock { $0.methodsEncodingParametersInURI } }
        set { state.withLock { $0.methodsEncodingParametersInURI = newValue } }
    }

    /// Replaces the default query string (`QueryString.string(from:)`) with `block`. An error it
    /// throws fails serialization with `NetworkingError.Code.requestSerializationFailed`, the
    /// error as `underlyingError`.
    public func setQueryStringSerialization(_ block: @escaping QueryStringSerialization) {
        state.withLock { $0.queryStringSerialization = block }
    }

    // MARK: Default headers

    /// The default header fields, in the order they are added to requests.
    public var httpRequestHeaders: [(name: String, value: String)] {
        state.withLock { $0.headers }
    }

    /// Sets a default header field (replacing one of the same name, in place, whatever its
    /// case), or removes it when `value` is nil.
    public func setValue(_ value: String?, forHTTPHeaderField name: String) {
        state.withLock { state in
            let index = state.headers.firstIndex { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            switch (index, value) {
            case let (index?, value?): state.headers[index] = (name, value)
            case let (index?, nil): state.headers.remove(at: index)
            case let (nil, value?): state.headers.append((name, value))
            case (nil, nil): break
            }
        }
    }

    /// The default value of a header field (case-insensitive), if set.
    public func value(forHTTPHeaderField name: String) -> String? {
        state.withLock { state in
            state.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Sets a Basic Authorization default header for `username` and `password` (RFC 7617,
    /// UTF-8).
    public func setAuthorizationHeaderField(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
    }

    /// Removes the Authorization default header.
    public func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
    }

    // MARK: Serializing

    /// Whether parameters for `method` go in the URL (compared in upper case, like
    /// AFNetworking).
    public func encodesParametersInURI(_ method: HTTPRequest.Method) -> Bool {
        let methods = httpMethodsEncodingParametersInURI
        if methods.contains(method) { return true }
        return HTTPRequest.Method(method.rawValue.uppercased()).map(methods.contains) ?? false
    }

    /// `request` with the default headers it does not already have and the properties set on
    /// this serializer.
    public func applyingDefaults(to request: Request) -> Request {
        let (headers, timeout, cookies, cachePolicy, serviceType, pipelining, cellular) = state.withLock {
            ($0.headers, $0.timeoutInterval, $0.httpShouldHandleCookies, $0.cachePolicy, $0.networkServiceType,
             $0.httpShouldUsePipelining, $0.allowsCellularAccess)
        }
        var request = request
        for header in headers where request.value(forHTTPHeaderField: header.name) == nil {
            request.addValue(header.value, forHTTPHeaderField: header.name)
        }
        if let timeout { request.timeoutInterval = timeout }
        if let cookies { request.httpShouldHandleCookies = cookies }
        if let cachePolicy { request.cachePolicy = cachePolicy }
        if let serviceType { request.networkServiceType = serviceType }
        if let pipelining { request.httpShouldUsePipelining = pipelining }
        if let cellular { request.allowsCellularAccess = cellular }
        return request
    }

    /// Adds the defaults, then the query string: appended to the URL for the methods in
    /// `httpMethodsEncodingParametersInURI` (nothing when it is empty), else as the body with
    /// Content-Type `application/x-www-form-urlencoded` unless one is set.
    ///
    /// Nil parameters leave the URL and the body as they are. (AFNetworking sets an empty form
    /// body then; keeping the request's own body lets a caller send a body it built itself.)
    open func serialize(_ request: Request, parameters: Any?) throws -> Request {
        try serializeAsQuery(request, parameters: parameters)
    }

    /// `serialize(_:parameters:)` for `Encodable` parameters, the verbs' typed form. This class
    /// encodes them by `FormParameters`' rule (keyed containers as dictionaries, unkeyed ones as
    /// arrays, then `QueryString`), into the URL or a form body as for any parameters;
    /// `JSONRequestSerializer` writes a body with `JSONEncoder` instead. A subclass overrides this
    /// to encode its own way.
    open func serialize<Parameters: Encodable & Sendable>(_ request: Request, encoding parameters: Parameters) throws -> Request {
        let object: Any
        do {
            object = try FormParameters.object(from: parameters)
        } catch {
            throw NetworkingError(.requestSerializationFailed, "the parameters do not encode: \(error)",
                                  failingURL: request.url, underlyingError: error)
        }
        return try serialize(request, parameters: object)
    }

    /// `serialize` as this class does it, whatever a subclass overrides.
    final func serializeAsQuery(_ request: Request, parameters: Any?) throws -> Request {
        var request = applyingDefaults(to: request)
        guard let parameters else { return request }
        let query = try queryString(for: request, parameters: parameters)
        if encodesParametersInURI(request.method) {
            if !query.isEmpty { request.url = try Self.url(request.url, appendingQuery: query) }
        } else {
            guard let body = query.data(using: stringEncoding) else {
                throw NetworkingError(.requestSerializationFailed,
                                      "the query string cannot be encoded as \(stringEncoding)",
                                      failingURL: request.url)
            }
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            request.body = body
        }
        return request
    }

    /// Builds a request for `method` and `urlString`, then serializes `parameters` into it.
    /// Throws `NetworkingError.Code.invalidURL` when `urlString` is not an absolute URL with a
    /// host.
    public func request(method: HTTPRequest.Method, urlString: String, parameters: Any?) throws -> Request {
        guard let url = URL(string: urlString), url.scheme != nil, url.host != nil else {
            throw NetworkingError(.invalidURL, "invalid URL: not an absolute URL with a host")
        }
        return try serialize(Request(url: url, method: method), parameters: parameters)
    }

    /// `request(method:urlString:parameters:)` for `Encodable` parameters
    /// (`serialize(_:encoding:)`).
    public func request<Parameters: Encodable & Sendable>(method: HTTPRequest.Method, urlString: String,
                                                          encoding parameters: Parameters) throws -> Request {
        try serialize(Request(url: Self.absoluteURL(urlString), method: method), encoding: parameters)
    }

    private static func absoluteURL(_ urlString: String) throws -> URL {
        guard let url = URL(string: urlString), url.scheme != nil, url.host != nil else {
            throw NetworkingError(.invalidURL, "invalid URL: not an absolute URL with a host")
        }
        return url
    }

    /// What the JSON and property list serializers share: URI methods as this class does them;
    /// otherwise the defaults, then, with parameters, `contentType` unless one is set and the
    /// body `encode` makes. `encode` returns nil for parameters its format cannot hold; that, or
    /// an error it throws, fails with `requestSerializationFailed` and `invalidMessage`.
    func serializingBody(_ request: Request, parameters: Any?, contentType: String, invalidMessage: String,
                         encode: (Any) throws -> Data?) throws -> Request {
        if encodesParametersInURI(request.method) { return try serializeAsQuery(request, parameters: parameters) }
        var request = applyingDefaults(to: request)
        guard let parameters else { return request }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let body: Data?
        do {
            body = try encode(parameters)
        } catch {
            throw NetworkingError(.requestSerializationFailed, invalidMessage, failingURL: request.url, underlyingError: error)
        }
        guard let body else { throw NetworkingError(.requestSerializationFailed, invalidMessage, failingURL: request.url) }
        request.body = body
        return request
    }

    /// The custom closure's query string, or the default one.
    private func queryString(for request: Request, parameters: Any) throws -> String {
        guard let custom = state.withLock({ $0.queryStringSerialization }) else {
            return QueryString.string(from: parameters)
        }
        do {
            return try custom(request, parameters)
        } catch {
            throw NetworkingError(.requestSerializationFailed, "the query string closure threw: \(error)",
                                  failingURL: request.url, underlyingError: error)
        }
    }

    /// `url` with `query` added to its query ("?" or "&"), before any fragment.
    private static func url(_ url: URL, appendingQuery query: String) throws -> URL {
        let string = url.absoluteString
        // In an absolute URL string the first "#" can only start the fragment.
        let end = string.firstIndex(of: "#") ?? string.endIndex
        let separator = url.query != nil ? "&" : "?"
        let result = string[..<end] + separator + query + string[end...]
        guard let newURL = URL(string: result) else {
            throw NetworkingError(.requestSerializationFailed, "the query string makes an invalid URL",
                                  failingURL: url)
        }
        return newURL
    }
}
