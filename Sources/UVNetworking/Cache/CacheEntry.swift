import Foundation
import HTTPTypes
import UVHTTP1

/// A stored response: what a cache keeps of an exchange to answer later requests with it
/// (RFC 9111 §3), and what it needs to judge it: the two clock readings of the exchange and the
/// request fields its Vary named.
struct CacheEntry: Sendable, Equatable {
    /// The key it is filed under (`CacheKey.key(for:)`).
    var key: String
    var status: Int { didSet { judge() } }
    var reason: String
    var fields: HTTPFields { didSet { judge() } }
    var body: Data
    /// When the request went out, and when the response came in (RFC 9111 §4.2.3).
    var requestTime: Date { didSet { judge() } }
    var responseTime: Date { didSet { judge() } }
    /// The Vary field names (lowercased) and what the request sent for each.
    var varyNames: [String]
    var varyValues: [String: String?]
    /// A large body looked up from disk stays there (`body` is then empty) and is played from
    /// its file (`CacheBodyFile`).
    var bodyFile: CacheBodyFile? = nil
    /// Its directives and freshness, read from its fields and clock readings once, when it is
    /// made or they change: every lookup and every hit's Age asks for them, and reading them
    /// (Cache-Control, Date, Expires, Age) costs tens of thousands of instructions.
    private(set) var control: CacheControl
    private(set) var freshness: CacheFreshness
    /// Its fields but Age, as a connection hands fields over: a hit's head is these and its
    /// Age (`StoredExchange.head`), made once per entry rather than at every hit.
    private(set) var receivedFields: ReceivedFields

    init(key: String, status: Int, reason: String, fields: HTTPFields, body: Data, requestTime: Date, responseTime: Date,
         varyNames: [String], varyValues: [String: String?], bodyFile: CacheBodyFile? = nil) {
        self.key = key
        self.status = status
        self.reason = reason
        self.fields = fields
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyNames = varyNames
        self.varyValues = varyValues
        self.bodyFile = bodyFile
        (control, freshness) = Self.judgement(status: status, fields: fields, requestTime: requestTime, responseTime: responseTime)
        receivedFields = Self.received(fields)
    }

    private mutating func judge() {
        (control, freshness) = Self.judgement(status: status, fields: fields, requestTime: requestTime, responseTime: responseTime)
        receivedFields = Self.received(fields)
    }

    private static func received(_ fields: HTTPFields) -> ReceivedFields {
        ReceivedFields(fields.lazy.filter { $0.name != .age }.map { HeaderField(name: $0.name.rawName, value: $0.value) })
    }

    private static func judgement(status: Int, fields: HTTPFields, requestTime: Date,
                                  responseTime: Date) -> (CacheControl, CacheFreshness) {
        let control = CacheControl(fields)
        return (control, CacheFreshness(status: status, fields: fields, control: control, requestTime: requestTime, responseTime: responseTime))
    }

    /// The body's length, in memory or in its file.
    var bodyLength: Int { bodyFile?.size ?? body.count }

    /// With the body in memory: itself, or with its file read; nil when the file cannot be read.
    /// Blocks when it reads.
    func materialized() -> CacheEntry? {
        guard let bodyFile else { return self }
        guard let data = bodyFile.readAll() else { return nil }
        var whole = self
        whole.body = data
        whole.bodyFile = nil
        return whole
    }

    /// Bytes it takes in a store, roughly: the body and the fields' text.
    var cost: Int {
        bodyLength + fields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 } + key.utf8.count + 64
    }

    /// Whether it may answer a request with `requestFields` (its Vary selection matches).
    func matches(_ requestFields: HTTPFields) -> Bool {
        CacheVary.matches(storedNames: varyNames, storedValues: varyValues, request: requestFields)
    }

    /// The entry once a 304 (`update`, received at `responseTime` for a request sent at
    /// `requestTime`) has validated it: its fields updated, its clock readings the 304's.
    func revalidated(by update: HTTPFields, requestTime: Date, responseTime: Date) -> CacheEntry {
        var update = update
        // A body stored decoded has no coding left for a 304 to name.
        if fields[.contentEncoding] == nil { update[.contentEncoding] = nil }
        return CacheEntry(key: key, status: status, reason: reason, fields: CacheStorePolicy.fields(fields, updatedBy: update), body: body,
                          requestTime: requestTime, responseTime: responseTime, varyNames: varyNames, varyValues: varyValues,
                          bodyFile: bodyFile)
    }
}
