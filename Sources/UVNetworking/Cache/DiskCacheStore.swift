import CZlib
import Foundation
import HTTPTypes
import Synchronization

/// Stored responses on disk, within a byte capacity: an SQLite index (`index.sqlite`, WAL)
/// and one file per body (`bodies/`). Several processes may use one directory at once (uvfetch
/// runs side by side): SQLite orders their index changes, body files are written under a
/// name of their own and renamed into place, and a file another process removes while this one
/// reads it stays readable (POSIX unlink).
///
/// Crash safety: a body is complete on disk (written, fsynced, renamed) before the index row
/// that names it is committed, and the row keeps its size and CRC-32: a body that is missing,
/// short, or not what was written (a torn write, a damaged disk, a process killed between
/// steps) makes its entry a miss, and the row is dropped. An index SQLite finds damaged is
/// set aside and the store starts empty. Files no row names (left by a crash) go when the
/// store opens. Bytes reach this store only for responses that may be stored: a `no-store`
/// response or request never comes here, not even as a temporary file.
///
/// Every call does file I/O: workers only, never a loop thread.
final class DiskCacheStore: Sendable {
    let capacity: Int
    let maximumEntryCost: Int
    let directory: URL
    private let bodies: URL
    private let index: Mutex<CacheIndexDatabase?>

    /// Opens (creating) the store in `directory`. Throws when the directory cannot be made
    /// or written, or SQLite cannot open an index there even afresh.
    init(directory: URL, capacity: Int, maximumEntryCost: Int) throws(NetworkingError) {
        self.directory = directory
        self.capacity = max(0, capacity)
        self.maximumEntryCost = min(self.capacity, maximumEntryCost)
        bodies = directory.appendingPathComponent("bodies", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: bodies, withIntermediateDirectories: true)
        } catch {
            throw NetworkingError(.cannotCreateFile, "cannot create the cache directory \(directory.path): \(error.localizedDescription)")
        }
        index = Mutex(try Self.openIndex(in: directory))
        sweepOrphans()
    }

    private static let schema = """
        CREATE TABLE IF NOT EXISTS entries(
            key TEXT NOT NULL, variant TEXT NOT NULL,
            status INTEGER NOT NULL, reason TEXT NOT NULL, fields TEXT NOT NULL,
            request_time REAL NOT NULL, response_time REAL NOT NULL,
            vary_names TEXT NOT NULL,
            body_file TEXT NOT NULL, body_size INTEGER NOT NULL, body_crc INTEGER NOT NULL,
            last_used REAL NOT NULL,
            PRIMARY KEY(key, variant));
        CREATE INDEX IF NOT EXISTS entries_by_use ON entries(last_used);
        """

    private static func openIndex(in directory: URL) throws(NetworkingError) -> CacheIndexDatabase {
        let path = directory.appendingPathComponent("index.sqlite").path
        func open() throws(CacheIndexDatabase.Failure) -> CacheIndexDatabase {
            let database = try CacheIndexDatabase(path: path)
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            try database.execute(schema)
            return database
        }
        do throws(CacheIndexDatabase.Failure) {
            return try open()
        } catch where error.isCorruption {
            // Not a database any more: set aside, start empty (bodies go with the sweep).
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            do {
                return try open()
            } catch {
                throw NetworkingError(.cannotCreateFile, "cannot open the cache index \(path): \(error)")
            }
        } catch {
            throw NetworkingError(.cannotCreateFile, "cannot open the cache index \(path): \(error)")
        }
    }

    /// Bytes of bodies indexed, all processes' together.
    var currentCost: Int {
        var total = 0
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("SELECT COALESCE(SUM(body_size), 0) FROM entries") { total = Int($0.integer(0)) }
        }
        return total
    }

    /// Entries indexed.
    var count: Int {
        var total = 0
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("SELECT COUNT(*) FROM entries") { total = Int($0.integer(0)) }
        }
        return total
    }

    /// One row of the index, as read.
    private struct Row {
        var variant, reason, fields, varyNames, file: String
        var status: Int
        var requestTime, responseTime: Double
        var size, crc: Int64
    }

    /// The variant of `key` a request with `requestFields` may be answered with, body read and
    /// checked; nil when none matches or its body is not what was stored (the row is dropped).
    func entry(for key: String, requestFields: HTTPFields) -> CacheEntry? {
        guard let (row, stored) = matchingRow(key, requestFields) else { return nil }
        guard let (body, bodyFile) = openBody(row.file, size: row.size, crc: row.crc) else {
            drop(key: key, variant: row.variant, file: row.file)
            return nil
        }
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("UPDATE entries SET last_used = ? WHERE key = ? AND variant = ?",
                               [.real(Date().timeIntervalSince1970), .text(key), .text(row.variant)])
        }
        var entry = stored
        entry.body = body
        entry.bodyFile = bodyFile
        return entry
    }

    /// The row of `key` whose Vary selection matches `requestFields`, and its entry without
    /// the body (nothing read from the body file). A row whose fields cannot be read is dropped.
    private func matchingRow(_ key: String, _ requestFields: HTTPFields) -> (Row, CacheEntry)? {
        var rows: [Row] = []
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("""
                SELECT variant, status, reason, fields, request_time, response_time, vary_names, body_file, body_size, body_crc
                FROM entries WHERE key = ?
                """, [.text(key)]) { row in
                rows.append(Row(variant: row.text(0), reason: row.text(2), fields: row.text(3), varyNames: row.text(6), file: row.text(7),
                                status: Int(row.integer(1)), requestTime: row.real(4), responseTime: row.real(5),
                                size: row.integer(8), crc: row.integer(9)))
            }
        }
        for row in rows {
            guard let varyValues = Self.decodeVariant(row.variant) else { continue }
            let names = row.varyNames.isEmpty ? [] : row.varyNames.components(separatedBy: "\n")
            guard CacheVary.matches(storedNames: names, storedValues: varyValues, request: requestFields) else { continue }
            // A status no response has (a damaged or tampered row) is a miss, like a bad body.
            guard let fields = Self.decodeFields(row.fields), (100...999).contains(row.status) else {
                drop(key: key, variant: row.variant, file: row.file)
                return nil
            }
            let entry = CacheEntry(key: key, status: row.status, reason: row.reason, fields: fields, body: Data(),
                                   requestTime: Date(timeIntervalSince1970: row.requestTime),
                                   responseTime: Date(timeIntervalSince1970: row.responseTime),
                                   varyNames: names, varyValues: varyValues)
            return (row, entry)
        }
        return nil
    }

    /// Keeps `entry`, replacing the variant of its key with the same Vary selection; false when
    /// it is too large or could not be written (a full disk: the store is left as it was).
    @discardableResult
    func store(_ entry: CacheEntry) -> Bool {
        guard entry.cost <= maximumEntryCost else {
            remove(key: entry.key, variant: Self.encodeVariant(entry.varyValues))
            return false
        }
        guard let file = writeBody(entry.body) else { return false }
        return index(entry, file: file, size: entry.body.count, crc: Self.crc(entry.body))
    }

    /// A path for a body written elsewhere (a response collected as it arrives,
    /// `CacheBodySpool`) and then given to `store(_:bodyFile:size:crc:)` by its name.
    func newBodyFile() -> (name: String, path: String) {
        let name = UUID().uuidString.lowercased() + ".body"
        return (name, bodies.appendingPathComponent(name).path)
    }

    /// Keeps `entry` (its body left out) with the body already in the file `name` (complete,
    /// `size` bytes, CRC-32 `crc`); the file is removed when it is not kept.
    @discardableResult
    func store(_ entry: CacheEntry, bodyFile name: String, size: Int, crc: Int64) -> Bool {
        guard size + entry.cost <= maximumEntryCost, !name.contains("/") else {
            unlink(bodies.appendingPathComponent(name).path)
            return false
        }
        return index(entry, file: name, size: size, crc: crc)
    }

    /// Updates the fields and clock readings of `entry`'s variant, whose body stays in its file
    /// (`entry.bodyFile`): a 304 validated it (RFC 9111 §4.3.4), and rewriting megabytes to
    /// change a few fields would cost what the validation saved. False, and nothing changed,
    /// when the row names another file by now (replaced or evicted meanwhile, maybe by
    /// another process: what is there is newer) or the entry has no file.
    func refresh(_ entry: CacheEntry) -> Bool {
        guard let file = entry.bodyFile?.name else { return false }
        return update(entry, file: file)
    }

    /// A HEAD's 200 for `key` (RFC 9111 §4.3.5): the variant `requestFields` select takes the
    /// HEAD's fields when they confirm it (`CacheStorePolicy.headConfirms`), else is dropped.
    /// Its body is neither read nor rewritten.
    func freshen(_ key: String, requestFields: HTTPFields, byHEAD head: HTTPFields, requestTime: Date, responseTime: Date) {
        guard let (row, stored) = matchingRow(key, requestFields) else { return }
        guard CacheStorePolicy.headConfirms(head, stored: stored.fields) else {
            return drop(key: key, variant: row.variant, file: row.file)
        }
        update(stored.revalidated(by: head, requestTime: requestTime, responseTime: responseTime), file: row.file)
    }

    /// Writes `entry`'s status, fields and clock readings into its variant's row while the row
    /// names the body file `file`; whether it did.
    @discardableResult
    private func update(_ entry: CacheEntry, file: String) -> Bool {
        var changed = 0
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("""
                UPDATE entries SET status = ?, reason = ?, fields = ?, request_time = ?, response_time = ?, last_used = ?
                WHERE key = ? AND variant = ? AND body_file = ?
                """, [.integer(Int64(entry.status)), .text(entry.reason), .text(Self.encodeFields(entry.fields)),
                      .real(entry.requestTime.timeIntervalSince1970), .real(entry.responseTime.timeIntervalSince1970),
                      .real(Date().timeIntervalSince1970), .text(entry.key), .text(Self.encodeVariant(entry.varyValues)), .text(file)])
            changed = database.changes
        }
        return changed == 1
    }

    /// Commits the row naming `file` (already complete on disk); removes the file when the
    /// commit fails, and the files of the rows it replaced or evicted once it succeeded.
    private func index(_ entry: CacheEntry, file: String, size: Int, crc: Int64) -> Bool {
        let variant = Self.encodeVariant(entry.varyValues)
        var replaced: [String] = []
        var evicted: [String] = []
        let committed = (try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.transaction { () throws(CacheIndexDatabase.Failure) in
                try database.query("SELECT body_file FROM entries WHERE key = ? AND variant = ?", [.text(entry.key), .text(variant)]) {
                    replaced.append($0.text(0))
                }
                try database.query("""
                    INSERT OR REPLACE INTO entries(key, variant, status, reason, fields, request_time, response_time, vary_names,
                                                   body_file, body_size, body_crc, last_used)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(entry.key), .text(variant), .integer(Int64(entry.status)), .text(entry.reason),
                          .text(Self.encodeFields(entry.fields)), .real(entry.requestTime.timeIntervalSince1970),
                          .real(entry.responseTime.timeIntervalSince1970), .text(entry.varyNames.joined(separator: "\n")),
                          .text(file), .integer(Int64(size)), .integer(crc),
                          .real(Date().timeIntervalSince1970)])
                evicted = try evict(database)
            }
        }) != nil
        guard committed else {
            unlink(bodies.appendingPathComponent(file).path)
            return false
        }
        for name in replaced + evicted where name != file { unlink(bodies.appendingPathComponent(name).path) }
        return true
    }

    /// Drops the least recently used rows until the bodies fit the capacity; returns their files.
    private func evict(_ database: CacheIndexDatabase) throws(CacheIndexDatabase.Failure) -> [String] {
        var total: Int64 = 0
        try database.query("SELECT COALESCE(SUM(body_size), 0) FROM entries") { total = $0.integer(0) }
        guard total > Int64(capacity) else { return [] }
        var victims: [(key: String, variant: String, file: String, size: Int64)] = []
        try database.query("SELECT key, variant, body_file, body_size FROM entries ORDER BY last_used") { row in
            guard total > Int64(capacity) else { return }
            victims.append((row.text(0), row.text(1), row.text(2), row.integer(3)))
            total -= row.integer(3)
        }
        for victim in victims {
            try database.query("DELETE FROM entries WHERE key = ? AND variant = ?", [.text(victim.key), .text(victim.variant)])
        }
        return victims.map(\.file)
    }

    /// Removes every variant of `key`.
    func remove(_ key: String) {
        var files: [String] = []
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.transaction { () throws(CacheIndexDatabase.Failure) in
                try database.query("SELECT body_file FROM entries WHERE key = ?", [.text(key)]) { files.append($0.text(0)) }
                try database.query("DELETE FROM entries WHERE key = ?", [.text(key)])
            }
        }
        for file in files { unlink(bodies.appendingPathComponent(file).path) }
    }

    private func remove(key: String, variant: String) {
        var files: [String] = []
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.transaction { () throws(CacheIndexDatabase.Failure) in
                try database.query("SELECT body_file FROM entries WHERE key = ? AND variant = ?", [.text(key), .text(variant)]) {
                    files.append($0.text(0))
                }
                try database.query("DELETE FROM entries WHERE key = ? AND variant = ?", [.text(key), .text(variant)])
            }
        }
        for file in files { unlink(bodies.appendingPathComponent(file).path) }
    }

    /// Drops a row whose body was found bad, unless another process replaced it meanwhile.
    private func drop(key: String, variant: String, file: String) {
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("DELETE FROM entries WHERE key = ? AND variant = ? AND body_file = ?",
                               [.text(key), .text(variant), .text(file)])
        }
        unlink(bodies.appendingPathComponent(file).path)
    }

    /// Removes everything (every process's entries).
    func removeAll() {
        var files: [String] = []
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.transaction { () throws(CacheIndexDatabase.Failure) in
                try database.query("SELECT body_file FROM entries") { files.append($0.text(0)) }
                try database.query("DELETE FROM entries")
            }
        }
        for file in files { unlink(bodies.appendingPathComponent(file).path) }
    }

    /// Runs `body` with the index; an index SQLite finds damaged is replaced by an empty one
    /// (a miss for everything it held), and the call fails.
    private func withIndex(_ body: (CacheIndexDatabase) throws(CacheIndexDatabase.Failure) -> Void) throws(CacheIndexDatabase.Failure) {
        try index.withLock { (database: inout CacheIndexDatabase?) throws(CacheIndexDatabase.Failure) in
            // 14: SQLITE_CANTOPEN.
            guard let current = database else { throw CacheIndexDatabase.Failure(code: 14, message: "no index") }
            do throws(CacheIndexDatabase.Failure) {
                try body(current)
            } catch where error.isCorruption {
                database = nil
                database = try? Self.openIndex(in: directory)
                throw error
            }
        }
    }

    // MARK: Bodies

    /// Writes `body` to a new file (temporary name, fsync, rename); returns its name.
    private func writeBody(_ body: Data) -> String? {
        let name = UUID().uuidString.lowercased() + ".body"
        let temporary = bodies.appendingPathComponent(".tmp-" + name).path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        let written = body.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, bodies.appendingPathComponent(name).path) == 0 else {
            unlink(temporary)
            return nil
        }
        return name
    }

    /// The body in `file`, checked (`size` bytes, CRC-32 `crc`): read whole when small, else
    /// opened to be played from the file (`CacheBodyFile`); nil when damaged or gone.
    private func openBody(_ file: String, size: Int64, crc: Int64) -> (Data, CacheBodyFile?)? {
        guard size >= Int64(CacheBodyFile.threshold) else { return readBody(file, size: size, crc: crc).map { ($0, nil) } }
        guard !file.contains("/"), let opened = CacheBodyFile.open(file, in: bodies, size: size, crc: crc) else { return nil }
        return (Data(), opened)
    }

    /// The body in `file`, when it has `size` bytes whose CRC-32 is `crc`.
    private func readBody(_ file: String, size: Int64, crc: Int64) -> Data? {
        guard !file.contains("/"), let data = FileManager.default.contents(atPath: bodies.appendingPathComponent(file).path),
              Int64(data.count) == size, Self.crc(data) == crc else { return nil }
        return data
    }

    /// Body files no row names, and temporary files, older than an hour (a writer that old
    /// has died): what a crash leaves. Run when the store opens.
    private func sweepOrphans() {
        var known = Set<String>()
        try? withIndex { (database) throws(CacheIndexDatabase.Failure) in
            try database.query("SELECT body_file FROM entries") { known.insert($0.text(0)) }
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: bodies.path) else { return }
        let cutoff = Date().addingTimeInterval(-3600)
        for name in names where !known.contains(name) {
            let path = bodies.appendingPathComponent(name).path
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  modified < cutoff else { continue }
            unlink(path)
        }
    }

    static func crc(_ data: Data) -> Int64 {
        data.withUnsafeBytes { crc(0, $0) }
    }

    /// `running` (the CRC-32 of the bytes before) continued over `bytes`.
    static func crc(_ running: Int64, _ bytes: UnsafeRawBufferPointer) -> Int64 {
        Int64(CZlib.crc32(uLong(running), bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    // MARK: Encodings

    /// Fields as "name: value" lines (values never hold CR or LF: swift-http-types refuses them).
    static func encodeFields(_ fields: HTTPFields) -> String {
        fields.map { "\($0.name.rawName): \($0.value)" }.joined(separator: "\r\n")
    }

    static func decodeFields(_ text: String) -> HTTPFields? {
        var fields = HTTPFields()
        guard !text.isEmpty else { return fields }
        for line in text.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { return nil }
            fields.append(HTTPField(name: name, value: String(line[line.index(after: colon)...].dropFirst())))
        }
        return fields
    }

    /// A Vary selection as JSON with sorted keys: the same selection, the same text.
    static func encodeVariant(_ values: [String: String?]) -> String {
        let object = values.mapValues { $0.map { $0 as Any } ?? NSNull() }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeVariant(_ text: String) -> [String: String?]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        var values: [String: String?] = [:]
        for (name, value) in object {
            if let text = value as? String { values[name] = .some(text) } else if value is NSNull { values[name] = .some(nil) } else { return nil }
        }
        return values
    }
}
