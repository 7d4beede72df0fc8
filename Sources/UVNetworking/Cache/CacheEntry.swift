import Foundation
import HTTPTypes

/// A stored response: what a cache keeps of an exchange to answer later requests with it
/// (RFC 9111 §3), and what it needs to judge it: the two clock readings of the exchange and the
/// request fields its Vary named.
struct CacheEntry: Sendable, Equatable {
    /// The key it is filed under (`CacheKey.key(for:)`).
    var key: String
    var status: Int
    var reason: String
    var fields: HTTPFields
    var body: Data
    /// When the request went out, and when the response came in (RFC 9111 §4.2.3).
    var requestTime: Date
    var responseTime: Date
    /// The Vary field names (lowercased) and what the request sent for each.
    var varyNames: [String]
    var varyValues: [String: String?]
    /// A large body looked up from disk stays there (`body` is then empty) and is played from
    /// its file (`CacheBodyFile`).
    var bodyFile: CacheBodyFile? = nil

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

    /// Its directives and freshness, read from its fields.
    var control: CacheControl { CacheControl(fields) }
    var freshness: CacheFreshness {
        CacheFreshness(status: status, fields: fields, control: control, requestTime: requestTime, responseTime: responseTime)
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
        var entry = self
        var update = update
        // A body stored decoded has no coding left for a 304 to name.
        if fields[.contentEncoding] == nil { update[.contentEncoding] = nil }
        entry.fields = CacheStorePolicy.fields(fields, updatedBy: update)
        entry.requestTime = requestTime
        entry.responseTime = responseTime
        return entry
    }
}
