import Testing
@testable import UVFetchQueue

/// `--db` and the PG* variables read as libpq reads them, without a server.
@Suite(.tags(.postgres)) struct DatabaseSettingsTests {
    private let none: [String: String] = [:]

    @Test func aFullURLGivesEveryPart() throws {
        let settings = try DatabaseSettings(url: "postgres://alice:s3cret@db.example:6432/crawl?sslmode=require", environment: none)
        #expect(settings.host == "db.example")
        #expect(settings.port == 6432)
        #expect(settings.user == "alice")
        #expect(settings.password == "s3cret")
        #expect(settings.database == "crawl")
        #expect(settings.sslMode == .require)
        #expect(!settings.isUnixSocket)
    }

    @Test func partsArePercentDecoded() throws {
        let settings = try DatabaseSettings(url: "postgresql://us%40er:p%3Aa%2Fss%20w@host/my%20db", environment: none)
        #expect(settings.user == "us@er")
        #expect(settings.password == "p:a/ss w")
        #expect(settings.database == "my db")
    }

    @Test func aPasswordMayHoldAnUnescapedAt() throws {
        let settings = try DatabaseSettings(url: "postgres://bob:a@b@host/db", environment: none)
        #expect(settings.user == "bob")
        #expect(settings.password == "a@b")
        #expect(settings.host == "host")
    }

    @Test func theEnvironmentFillsWhatTheURLLeavesOut() throws {
        let environment = ["PGHOST": "envhost", "PGPORT": "7000", "PGUSER": "envuser", "PGPASSWORD": "envpass",
                           "PGDATABASE": "envdb", "PGSSLMODE": "disable"]
        let fromEnvironment = try DatabaseSettings(url: nil, environment: environment)
        #expect(fromEnvironment.host == "envhost" && fromEnvironment.port == 7000 && fromEnvironment.user == "envuser")
        #expect(fromEnvironment.password == "envpass" && fromEnvironment.database == "envdb" && fromEnvironment.sslMode == .disable)
        // The URL's parts win over the variables.
        let mixed = try DatabaseSettings(url: "postgres://urluser@urlhost/urldb", environment: environment)
        #expect(mixed.host == "urlhost" && mixed.user == "urluser" && mixed.database == "urldb")
        #expect(mixed.port == 7000 && mixed.password == "envpass" && mixed.sslMode == .disable)
    }

    @Test func libpqDefaultsApplyWithNeither() throws {
        let settings = try DatabaseSettings(url: "postgres://", environment: ["USER": "ignored"])
        #expect(settings.host == "/var/run/postgresql")
        #expect(settings.isUnixSocket)
        #expect(settings.port == 5432)
        #expect(!settings.user.isEmpty)
        #expect(settings.database == settings.user)
        #expect(settings.sslMode == .prefer)
    }

    @Test func aUnixSocketDirectoryFromTheHostOrTheQuery() throws {
        let encoded = try DatabaseSettings(url: "postgres://u@%2Ftmp%2Fpg:5433/db", environment: none)
        #expect(encoded.isUnixSocket && encoded.host == "/tmp/pg" && encoded.unixSocketPath == "/tmp/pg/.s.PGSQL.5433")
        let query = try DatabaseSettings(url: "postgresql:///db?host=/var/run/pg&port=6000&user=u", environment: none)
        #expect(query.isUnixSocket && query.unixSocketPath == "/var/run/pg/.s.PGSQL.6000" && query.user == "u")
    }

    @Test func anIPv6HostInBrackets() throws {
        let settings = try DatabaseSettings(url: "postgres://u@[::1]:5999/db", environment: none)
        #expect(settings.host == "::1" && settings.port == 5999)
        #expect(settings.description == "postgres://u@[::1]:5999/db")
    }

    @Test func theDescriptionNeverShowsThePassword() throws {
        let settings = try DatabaseSettings(url: "postgres://alice:hunter2@h:1/d", environment: ["PGPASSWORD": "other"])
        #expect(settings.description == "postgres://alice@h:1/d")
        #expect(!settings.description.contains("hunter2"))
        let bad = DatabaseSettingsError.badPercentEncoding("postgres://alice:hunter2%zz@h/d")
        #expect(!bad.description.contains("hunter2"))
    }

    @Test(arguments: [
        ("mysql://h/db", DatabaseSettingsError.notAURL("mysql://h/db")),
        ("postgres://h:99999/db", .invalidPort("99999")),
        ("postgres://h:port/db", .invalidPort("port")),
        ("postgres://h/db?sslmode=sometimes", .invalidSSLMode("sometimes")),
        ("postgres://h1,h2/db", .severalHosts),
        ("postgres://u:%zz@h/db", .badPercentEncoding("%zz")),
        ("postgres://h/db?colour=blue", .invalidParameter("colour", "blue")),
    ])
    func whatLibpqRefusesIsRefused(url: String, expected: DatabaseSettingsError) {
        #expect(throws: expected) { try DatabaseSettings(url: url, environment: [:]) }
    }

    @Test func aBadPortInTheEnvironmentIsRefusedToo() {
        #expect(throws: DatabaseSettingsError.invalidPort("x")) { try DatabaseSettings(url: nil, environment: ["PGPORT": "x"]) }
    }
}
