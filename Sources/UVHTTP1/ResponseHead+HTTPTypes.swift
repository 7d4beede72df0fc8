import HTTPTypes

extension ResponseHead {
    /// The head as a swift-http-types response. Built off the loop thread (on the worker pool, or
    /// when a caller asks a task for its response): validating and lowercasing field names costs
    /// more than the loop can spare per request.
    ///
    /// A head with a template (the same bytes as an earlier head of its connection apart from
    /// Date's value, status line included) shares the response its template last handed out for
    /// the same Date value: a server sends the same head response after response, and the same
    /// Date for a whole second of them, so most heads cost one lock and one compare of Date's
    /// bytes, and no allocation.
    public var httpResponse: HTTPResponse {
        guard let template else {
            if let builtResponse { return unsafeDowncast(builtResponse, to: BuiltResponseBox.self).response }
            return Self.makeResponse(self)
        }
        return withDateValue { template.sharedResponse(date: $0, of: self) }
    }

    /// The fields as swift-http-types fields (shared with the template's followers, as
    /// `httpResponse` is).
    public var httpFields: HTTPFields {
        guard let template else {
            if let builtResponse { return unsafeDowncast(builtResponse, to: BuiltResponseBox.self).response.headerFields }
            return Self.makeFields(headers)
        }
        return withDateValue { template.sharedResponse(date: $0, of: self) }.headerFields
    }

    /// A head made from `response` (HTTP/1.1, kept alive), its fields also given as `headers`
    /// (the same fields; their order may differ): what the cache hands a task for a stored
    /// response, whose swift-http-types form it has already, so `httpResponse` does not build
    /// it again from bytes.
    package static func built(_ response: HTTPResponse, headers: ReceivedFields) -> ResponseHead {
        ResponseHead(versionMajor: 1, versionMinor: 1, status: response.status.code, reason: response.status.reasonPhrase,
                     headers: headers, keepAlive: true, builtResponse: BuiltResponseBox(response))
    }

    /// Calls `body` with the value of the first Date field (empty without one).
    private func withDateValue<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard dateIndex >= 0 else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return headers.withField(at: dateIndex) { _, value in body(value) }
    }

    /// For `head`, one of this template's followers, whose first Date field has the value
    /// `date`: the response last built for that value, or (a new second) one built now, which
    /// replaces it. Whichever thread asks, under the template's lock.
    private func sharedResponse(date: UnsafeBufferPointer<UInt8>, of head: ResponseHead) -> HTTPResponse {
        followersResponse.withLock { cached in
            guard let cached else {
                // The follower's own bytes: the same head as the template's, its Date included.
                let box = DatedResponseBox(date: Array(date), response: Self.makeResponse(head))
                cached = box
                return box.response
            }
            let box = unsafeDowncast(cached, to: DatedResponseBox.self)
            if box.date.withUnsafeBufferPointer({ equalBytes($0, date) }) { return box.response }
            // Date is the only field that differs: copy the response and replace its value.
            var response = box.response
            let index = head.dateIndex
            response.headerFields[index] = Self.field(response.headerFields[index].name, date)
            box.date = Array(date)
            box.response = response
            return response
        }
    }

    /// Builds the swift-http-types response of `head` from its own bytes.
    private static func makeResponse(_ head: ResponseHead) -> HTTPResponse {
        HTTPResponse(status: .init(code: head.status, reasonPhrase: head.reason), headerFields: makeFields(head.headers))
    }

    /// Builds swift-http-types fields from received ones.
    fileprivate static func makeFields(_ headers: ReceivedFields) -> HTTPFields {
        var fields = HTTPFields()
        // Without this, appending grows the storage several times for a typical head.
        fields.reserveCapacity(headers.count)
        for index in headers.indices {
            headers.withField(at: index) { name, value in
                // The decoder only lets tokens through as names, so this never drops a field.
                guard let name = HTTPField.Name.received(name) else { return }
                fields.append(field(name, value))
            }
        }
        return fields
    }

    /// A received field as a swift-http-types field.
    private static func field(_ name: HTTPField.Name, _ value: UnsafeBufferPointer<UInt8>) -> HTTPField {
        if value.allSatisfy({ $0 < 0x80 }) { return HTTPField(name: name, value: String(decoding: value, as: UTF8.self)) }
        // Bytes, not a String: a value with obs-text stays as received. (Slower: swift-http-types
        // validates UTF-8 through unspecialised generic code.)
        return HTTPField(name: name, value: value)
    }
}

extension ReceivedFields {
    /// The fields as swift-http-types fields, in order (names keep the peer's spelling in
    /// `rawName`; a value with obs-text keeps its bytes).
    public var httpFields: HTTPFields { ResponseHead.makeFields(self) }
}

/// The response a head was made from (`ResponseHead.built`); typed AnyObject in ResponseHead.swift
/// for the same reason as `DatedResponseBox`.
private final class BuiltResponseBox: Sendable {
    let response: HTTPResponse

    init(_ response: HTTPResponse) {
        self.response = response
    }
}

/// The response a template head last handed out to its followers and the Date value it
/// carries; kept by the template (`ResponseHead.followersResponse`, typed AnyObject there so that
/// ResponseHead.swift needs only the standard library) and changed only under its lock.
private final class DatedResponseBox {
    package var date: [UInt8]
    package var response: HTTPResponse

    package init(date: [UInt8], response: HTTPResponse) {
        self.date = date
        self.response = response
    }
}

extension HTTPField.Name {
    /// The names most responses carry, spelled as servers usually send them, grouped by length.
    private static let commonByLength: [[(spelling: [UInt8], name: HTTPField.Name)]] = {
        let names: [HTTPField.Name] = [
            .contentType, .contentLength, .date, .server, .connection, .eTag, .lastModified,
            .acceptRanges, .cacheControl, .transferEncoding, .location, .vary, .expires,
            .contentEncoding, .contentDisposition, .setCookie, .age, .retryAfter, .wwwAuthenticate,
            .strictTransportSecurity, .accessControlAllowOrigin,
        ]
        var table = Array(repeating: [(spelling: [UInt8], name: HTTPField.Name)](), count: 33)
        for name in names {
            let spelling = Array(name.rawName.utf8)
            table[spelling.count].append((spelling, name))
        }
        return table
    }()

    /// The name for bytes received from a peer, or nil if they are not a token.
    ///
    /// A name spelled exactly like a common one reuses its value: no validation, no lowercasing
    /// and no allocation. Any other spelling goes through the checking initializer, so `rawName`
    /// always keeps the peer's spelling.
    package static func received(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPField.Name? {
        let table = commonByLength
        if bytes.count < table.count {
            for candidate in table[bytes.count] where candidate.spelling.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
                return candidate.name
            }
        }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }
}
