import HTTPTypes

extension ResponseHead {
    /// The head as a swift-http-types response. Built off the loop thread (on the worker pool, or
    /// when a caller asks a task for its response): validating and lowercasing field names costs
    /// more than the loop can spare per request.
    ///
    /// A head with a template (the same bytes as an earlier head of its connection apart from
    /// Date's value) reuses the template's fields, copied on write, with only Date's value
    /// replaced: a server sends the same fields response after response.
    var httpResponse: HTTPResponse {
        HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: httpFields)
    }

    /// The fields as swift-http-types fields.
    var httpFields: HTTPFields {
        guard let template else { return Self.makeFields(headers) }
        var fields = template.templateFields
        if dateIndex >= 0 {
            headers.withField(at: dateIndex) { _, value in
                fields[dateIndex] = Self.field(fields[dateIndex].name, value)
            }
        }
        return fields
    }

    /// This head's fields for the heads that name it as their template, built once, by
    /// whichever thread asks first.
    private var templateFields: HTTPFields {
        sharedFields.withLock { cached in
            if let cached { return unsafeDowncast(cached, to: HTTPFieldsBox.self).fields }
            let box = HTTPFieldsBox(Self.makeFields(headers))
            cached = box
            return box.fields
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

/// A template head's swift-http-types fields, kept by the head (`ResponseHead.sharedFields`,
/// typed AnyObject there so that ResponseHead.swift needs only the standard library).
private final class HTTPFieldsBox {
    let fields: HTTPFields

    init(_ fields: HTTPFields) {
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
