import Foundation

/// The verbs with `Encodable` parameters: a struct (or any `Encodable`) in place of a dictionary.
/// Where they go is the request serializer's rule, as for any parameters: the query string for
/// GET, HEAD and DELETE (`httpMethodsEncodingParametersInURI`), the body for the others. In the
/// query and in `HTTPRequestSerializer`'s form body the value is flattened as
/// `HTTPRequestSerializer.serialize(_:encoding:)` says (nested values as `key[sub]`, arrays as
/// `key[]`); `JSONRequestSerializer` writes the body with `JSONEncoder`.
///
/// A dictionary or array literal of `Encodable` values takes these forms too (Swift prefers them
/// to `Any?`), with the same query string or form body as before; a `[String: Any]` takes the
/// `Any?` forms.
extension HTTPSessionManager {
    /// GET: `parameters` go to the query string.
    @discardableResult
    public func get(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                    downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                    success: Success?, failure: Failure?) -> DataTask? {
        start(.get, urlString, parameters, headers, nil, downloadProgress, success, failure)
    }

    /// HEAD: `parameters` go to the query string; success gets only the task.
    @discardableResult
    public func head(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                     success: (@Sendable (DataTask) -> Void)?, failure: Failure?) -> DataTask? {
        var taskOnly: Success?
        if let success { taskOnly = { task, _ in success(task) } }
        return start(.head, urlString, parameters, headers, nil, nil, taskOnly, failure)
    }

    /// POST: `parameters` go to the body.
    @discardableResult
    public func post(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                     uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                     success: Success?, failure: Failure?) -> DataTask? {
        start(.post, urlString, parameters, headers, uploadProgress, nil, success, failure)
    }

    /// PUT: `parameters` go to the body.
    @discardableResult
    public func put(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                    success: Success?, failure: Failure?) -> DataTask? {
        start(.put, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// PATCH: `parameters` go to the body.
    @discardableResult
    public func patch(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                      success: Success?, failure: Failure?) -> DataTask? {
        start(.patch, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// DELETE: `parameters` go to the query string.
    @discardableResult
    public func delete(_ urlString: String, parameters: some Encodable & Sendable, headers: [String: String]? = nil,
                       success: Success?, failure: Failure?) -> DataTask? {
        start(.delete, urlString, parameters, headers, nil, nil, success, failure)
    }

    /// `dataTask(httpMethod:urlString:parameters:…)` with `Encodable` parameters: not yet started;
    /// nil when they do not encode, `failure` then getting (nil, error) on the completion queue.
    public func dataTask(httpMethod method: HTTPRequest.Method, urlString: String, parameters: some Encodable & Sendable,
                         headers: [String: String]? = nil,
                         uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                         downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                         success: Success?, failure: Failure?) -> DataTask? {
        let request: Request
        do {
            request = try makeRequest(method, urlString, encoding: parameters, headers)
        } catch {
            deliverSerializationFailure(error, to: failure)
            return nil
        }
        return dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                        success: success, failure: failure)
    }

    /// The URL resolved against `baseURL`, `parameters` serialized, then `headers` applied.
    func makeRequest(_ method: HTTPRequest.Method, _ urlString: String, encoding parameters: some Encodable & Sendable,
                     _ headers: [String: String]?) throws -> Request {
        applying(headers, to: try requestSerializer.request(method: method, urlString: resolve(urlString), encoding: parameters))
    }

    private func start(_ method: HTTPRequest.Method, _ urlString: String, _ parameters: some Encodable & Sendable,
                       _ headers: [String: String]?,
                       _ uploadProgress: (@Sendable (Progress) -> Void)?, _ downloadProgress: (@Sendable (Progress) -> Void)?,
                       _ success: Success?, _ failure: Failure?) -> DataTask? {
        let task = dataTask(httpMethod: method, urlString: urlString, parameters: parameters, headers: headers,
                            uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
        task?.resume()
        return task
    }
}
