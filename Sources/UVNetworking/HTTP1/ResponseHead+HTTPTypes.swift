import HTTPTypes

extension ResponseHead {
    /// The head as a swift-http-types response. Built off the loop thread (on the worker pool, or
    /// when a caller asks a task for its response): validating and lowercasing field names costs
    /// more than the loop can spare per request.
    var httpResponse: HTTPResponse {
        HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: httpFields)
    }

    /// The fields as swift-http-types fields.
    ///
    /// A head with a template (the same bytes as an earlier head of its connection apart from
    /// Date's value) shares the fields its template last handed out for the same Date value: a
    /// server sends the same fields response after response, and the same Date for a whole
    /// second of them, so most heads cost one lock and one compare of Date's bytes.
    var httpFields: HTTPFields {
        guard let template else { return Self.makeFields(headers) }
        guard dateIndex >= 0 else { return template.sharedFields(date: UnsafeBufferPointer(start: nil, count: 0), of: self) }
        return headers.withField(at: dateIndex) { _, value in template.sharedFields(date: value, of: self) }
    }

    /// For `head`, one of this template's followers, whose first Date field has the value
    /// `date`: the fields last built for that value, or (a new second) fields built now, which
    /// replace them. Whichever thread asks, under the template's lock.
    private func sharedFields(date: UnsafeBufferPointer<UInt8>, of head: ResponseHead) -> HTTPFields {
        sharedFields.withLock { cached in
            guard let cached else {
                // The follower's own bytes: the same fields as the template's, its Date included.
                let box = DatedFieldsBox(date: Array(date), fields: Self.makeFields(head.headers))
                cached = box
                return box.fields
            }
            let box = unsafeDowncast(cached, to: DatedFieldsBox.self)
            if box.date.withUnsafeBufferPointer({ equalBytes($0, date) }) { return box.fields }
            // Date is the only field that differs: copy the fields and replace its value.
            var fields = box.fields
            let index = head.dateIndex
            fields[index] = Self.field(fields[index].name, date)
            box.date = Array(date)
            box.fields = fields
            return fields
        }
    }

    /// Builds swift-http-types fields from received ones.
    private static func makeFields(_ headers: ReceivedFields) -> HTTPFields {
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

/// The fields a template head last handed out to its followers and the Date value they carry;
/// kept by the template (`ResponseHead.sharedFields`, typed AnyObject there so that
/// ResponseHead.swift needs only the standard library) and changed only under its lock.
private final class DatedFieldsBox {
    var date: [UInt8]
    var fields: HTTPFields

    init(date: [UInt8], fields: HTTPFields) {
        self.date = date
        self.fields = fields
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
    static func received(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPField.Name? {
        let table = commonByLength
        if bytes.count < table.count {
            for candidate in table[bytes.count] where candidate.spelling.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
                return candidate.name
            }
        }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }
}
