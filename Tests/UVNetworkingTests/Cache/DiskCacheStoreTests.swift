import Dispatch
import Foundation
import HTTPTypes
import Synchronization
import Testing
@testable import UVNetworking

/// The disk store on real files: kept across opens, damaged bodies and indexes read as
/// misses, eviction, two stores on one directory at once, and directories it cannot use.
@Suite(.tags(.unit)) struct DiskCacheStoreTests {
    private static func directory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("uvn-disk-cache-\(UUID().uuidString)")
        return url
    }

    private static func entry(_ key: String, body: String, vary: [String: String?] = [:], at date: Date = Date()) -> CacheEntry {
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        fields[.contentType] = "text/plain"
        if !vary.isEmpty { fields[.vary] = vary.keys.sorted().joined(separator: ", ") }
        return CacheEntry(key: key, status: 200, reason: "OK", fields: fields, body: Data(body.utf8), requestTime: date,
                          responseTime: date, varyNames: vary.keys.sorted(), varyValues: vary)
    }

    private static func bodyFiles(_ directory: URL) -> [URL] {
        let bodies = directory.appendingPathComponent("bodies")
        return ((try? FileManager.default.contentsOfDirectory(atPath: bodies.path)) ?? []).map { bodies.appendingPathComponent($0) }
    }

    @Test func entriesOutliveTheStoreThatWroteThem() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let store = try DiskCacheStore(directory: directory, capacity: 1 << 20, maximumEntryCost: 1 << 19)
            #expect(store.store(Self.entry("http://a/x", body: "for json", vary: ["accept": "application/json"], at: date)))
            #expect(store.store(Self.entry("http://a/x", body: "for html", vary: ["accept": "text/html"], at: date)))
        }
        let reopened = try DiskCacheStore(directory: directory, capacity: 1 << 20, maximumEntryCost: 1 << 19)
        #expect(reopened.count == 2)
        var json = HTTPFields()
        json[.accept] = "application/json"
        let found = try #require(reopened.entry(for: "http://a/x", requestFields: json))
        #expect(found == Self.entry("http://a/x", body: "for json", vary: ["accept": "application/json"], at: date))
        var none = HTTPFields()
        none[.accept] = "image/png"
        #expect(reopened.entry(for: "http://a/x", requestFields: none) == nil)
        reopened.remove("http://a/x")
        #expect(reopened.count == 0)
        #expect(Self.bodyFiles(directory).isEmpty)
    }

    @Test func aDamagedShortOrMissingBodyIsAMissAndItsRowGoes() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 1 << 20, maximumEntryCost: 1 << 19)
        for (index, damage) in ["flip", "truncate", "delete"].enumerated() {
            let key = "http://a/\(index)"
            store.store(Self.entry(key, body: String(repeating: "z", count: 1000)))
            let file = try #require(Self.bodyFiles(directory).first)
            switch damage {
            case "flip":
                var bytes = try Data(contentsOf: file)
                bytes[500] ^= 0xFF
                try bytes.write(to: file)
            case "truncate":
                try Data(repeating: 0x7A, count: 999).write(to: file)
            default:
                try FileManager.default.removeItem(at: file)
            }
            #expect(store.entry(for: key, requestFields: HTTPFields()) == nil, "\(damage)")
            #expect(store.count == 0, "\(damage)")
            #expect(Self.bodyFiles(directory).isEmpty, "\(damage)")
        }
    }

    @Test func aLargeBodyStaysInItsFileAndReadsBackWhole() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 16 << 20, maximumEntryCost: 8 << 20)
        let text = (0..<(CacheBodyFile.threshold / 8 + 1000)).map { String(format: "%07d\n", $0) }.joined()
        #expect(store.store(Self.entry("http://a/large", body: text)))
        let found = try #require(store.entry(for: "http://a/large", requestFields: HTTPFields()))
        let file = try #require(found.bodyFile)
        #expect(found.body.isEmpty)
        #expect(found.bodyLength == text.utf8.count && file.size == text.utf8.count)
        #expect(file.chunk(at: 0) == Data(text.utf8).prefix(CacheBodyFile.chunkSize))
        #expect(file.chunk(at: file.size) == Data())
        #expect(found.materialized()?.body == Data(text.utf8))
        // Evicted meanwhile (another process): the open file still reads what was checked.
        store.remove("http://a/large")
        #expect(Self.bodyFiles(directory).isEmpty)
        #expect(found.materialized()?.body == Data(text.utf8))
        // Small bodies still come back in memory.
        #expect(store.store(Self.entry("http://a/small", body: "small")))
        #expect(store.entry(for: "http://a/small", requestFields: HTTPFields())?.bodyFile == nil)
    }

    @Test func aRefreshedLargeEntryKeepsItsFileAndTakesTheNewFields() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 16 << 20, maximumEntryCost: 8 << 20)
        let text = String(repeating: "b", count: CacheBodyFile.threshold + 10)
        #expect(store.store(Self.entry("http://a/large", body: text, at: Date(timeIntervalSince1970: 1_700_000_000))))
        let found = try #require(store.entry(for: "http://a/large", requestFields: HTTPFields()))
        let file = try #require(found.bodyFile)
        var update = HTTPFields()
        update[.eTag] = "\"v2\""
        let later = Date(timeIntervalSince1970: 1_700_000_500)
        #expect(store.refresh(found.revalidated(by: update, requestTime: later, responseTime: later)))
        // The same file; the row's fields and clock are the 304's.
        #expect(Self.bodyFiles(directory).map(\.lastPathComponent) == [file.name])
        let refreshed = try #require(store.entry(for: "http://a/large", requestFields: HTTPFields()))
        #expect(refreshed.fields[.eTag] == "\"v2\"" && refreshed.responseTime == later)
        #expect(refreshed.materialized()?.body == Data(text.utf8))
        // Replaced meanwhile (another process stored a newer response): the refresh of the
        // entry looked up before leaves the newer one as it is.
        #expect(store.store(Self.entry("http://a/large", body: "newer")))
        #expect(!store.refresh(found.revalidated(by: update, requestTime: later, responseTime: later)))
        #expect(store.entry(for: "http://a/large", requestFields: HTTPFields())?.body == Data("newer".utf8))
        // An entry whose body is in memory has no file to keep: nothing to refresh.
        #expect(!store.refresh(Self.entry("http://a/large", body: "small")))
    }

    @Test func aHEADFreshensARowWithoutItsBodyOrDropsIt() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 16 << 20, maximumEntryCost: 8 << 20)
        let text = String(repeating: "h", count: CacheBodyFile.threshold + 10)
        var entry = Self.entry("http://a/large", body: text, at: Date(timeIntervalSince1970: 1_700_000_000))
        entry.fields[.eTag] = "\"v1\""
        entry.fields[.contentLength] = String(text.utf8.count)
        #expect(store.store(entry))
        let files = Self.bodyFiles(directory)
        var head = HTTPFields()
        head[.eTag] = "\"v1\""
        head[.contentLength] = String(text.utf8.count)
        head[.cacheControl] = "max-age=600"
        let later = Date(timeIntervalSince1970: 1_700_000_500)
        store.freshen("http://a/large", requestFields: HTTPFields(), byHEAD: head, requestTime: later, responseTime: later)
        #expect(Self.bodyFiles(directory) == files)
        let freshened = try #require(store.entry(for: "http://a/large", requestFields: HTTPFields()))
        #expect(freshened.fields[.cacheControl] == "max-age=600" && freshened.responseTime == later)
        // Another ETag: the row and its file go.
        head[.eTag] = "\"v2\""
        store.freshen("http://a/large", requestFields: HTTPFields(), byHEAD: head, requestTime: later, responseTime: later)
        #expect(store.entry(for: "http://a/large", requestFields: HTTPFields()) == nil)
        #expect(Self.bodyFiles(directory).isEmpty)
    }

    @Test func aRowWithAStatusNoResponseHasIsAMiss() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 1 << 20, maximumEntryCost: 1 << 19)
        #expect(store.store(Self.entry("http://a/tampered", body: "body")))
        // Another program wrote the index: a status HTTPResponse would refuse.
        let index = try CacheIndexDatabase(path: directory.appendingPathComponent("index.sqlite").path)
        try index.execute("UPDATE entries SET status = 5000")
        #expect(store.entry(for: "http://a/tampered", requestFields: HTTPFields()) == nil)
        #expect(store.count == 0)
    }

    @Test func aDamagedLargeBodyIsAMissToo() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 16 << 20, maximumEntryCost: 8 << 20)
        let text = String(repeating: "y", count: CacheBodyFile.threshold + 10)
        store.store(Self.entry("http://a/large", body: text))
        let file = try #require(Self.bodyFiles(directory).first)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 3] ^= 0x01
        try bytes.write(to: file)
        #expect(store.entry(for: "http://a/large", requestFields: HTTPFields()) == nil)
        #expect(store.count == 0)
    }

    @Test func anIndexThatIsNotADatabaseIsReplacedByAnEmptyOne() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 8192).write(to: directory.appendingPathComponent("index.sqlite"))
        let store = try DiskCacheStore(directory: directory, capacity: 1 << 20, maximumEntryCost: 1 << 19)
        #expect(store.count == 0)
        #expect(store.store(Self.entry("http://a/", body: "fresh start")))
        #expect(store.entry(for: "http://a/", requestFields: HTTPFields())?.body == Data("fresh start".utf8))
    }

    @Test func theLeastRecentlyUsedGoFirstWhenTheCapacityIsPassed() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, capacity: 3000, maximumEntryCost: 1500)
        let body = String(repeating: "b", count: 1000)
        store.store(Self.entry("http://a/1", body: body))
        store.store(Self.entry("http://a/2", body: body))
        store.store(Self.entry("http://a/3", body: body))
        // A use makes the first the most recent.
        #expect(store.entry(for: "http://a/1", requestFields: HTTPFields()) != nil)
        store.store(Self.entry("http://a/4", body: body))
        #expect(store.entry(for: "http://a/2", requestFields: HTTPFields()) == nil)
        #expect(store.entry(for: "http://a/1", requestFields: HTTPFields()) != nil)
        #expect(store.currentCost <= 3000)
        #expect(Self.bodyFiles(directory).count == store.count)
        // Too large for the store: not kept.
        #expect(!store.store(Self.entry("http://a/big", body: String(repeating: "x", count: 2000))))
    }

    @Test func twoStoresOnOneDirectoryAtOnceReadOnlyWholeEntries() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try DiskCacheStore(directory: directory, capacity: 1 << 22, maximumEntryCost: 1 << 20)
        let second = try DiskCacheStore(directory: directory, capacity: 1 << 22, maximumEntryCost: 1 << 20)
        let bad = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let store = worker % 2 == 0 ? first : second
            for round in 0..<40 {
                let key = "http://a/\(round % 5)"
                let body = String(repeating: Character(UnicodeScalar(UInt8(97 + worker))), count: 2000 + round)
                store.store(Self.entry(key, body: body))
                if let read = store.entry(for: key, requestFields: HTTPFields()) {
                    // Whoever wrote it, it is one writer's whole body.
                    let bytes = Set(read.body)
                    if bytes.count != 1 || read.body.count < 2000 { bad.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(bad.load(ordering: .relaxed) == 0)
        #expect(first.count == 5)
        #expect(Self.bodyFiles(directory).count == 5)
    }

    @Test func aDirectoryThatCannotBeMadeIsAClearError() {
        #expect(throws: NetworkingError.self) {
            _ = try DiskCacheStore(directory: URL(fileURLWithPath: "/dev/null/cache"), capacity: 1 << 20, maximumEntryCost: 1 << 10)
        }
        do {
            _ = try HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: URL(fileURLWithPath: "/dev/null/cache"))
            Issue.record("no error")
        } catch {
            #expect(error.code == .cannotCreateFile)
        }
    }
}
