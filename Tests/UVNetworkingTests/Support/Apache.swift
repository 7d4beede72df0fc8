// Debian's apache2 for the ForeignServers suites (ForeignServers.swift): mod_deflate on
// text/plain, as sites commonly run it. Self-contained: the modules are loaded from Debian's .so
// files by absolute path, nothing of /etc/apache2 is read.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension TestServers {
    /// apache2 in the foreground (`-DFOREGROUND`, prefork, at most 8 children, authorisation
    /// core only, which grants every request) on
    /// 127.0.0.1:<free port>. Besides ForeignServer's files it serves `/shipped/text.txt`, the
    /// same text, where If-None-Match is left as clients send it: see `apacheConfig`.
    static func startApache() throws -> ForeignServer {
        try launchForeign(.apache, binary: "/usr/sbin/apache2", errorLog: "error.log") { directory, port in
            try FileManager.default.createDirectory(atPath: directory + "/www/shipped", withIntermediateDirectories: true)
            try ForeignServer.write(ForeignServer.textBody, to: directory + "/www/shipped/text.txt")
            try apacheConfig(directory: directory, port: port).write(toFile: directory + "/apache2.conf", atomically: false, encoding: .utf8)
            // A session of its own: stopping, Apache signals its whole process group, which
            // would otherwise be the test process's.
            return ["/usr/bin/setsid", "/usr/sbin/apache2", "-f", directory + "/apache2.conf", "-DFOREGROUND"]
        }
    }

    /// mod_deflate answers a request that accepts gzip with a gzip representation whose ETag is
    /// the file's with "-gzip" added (DeflateAlterETag's default), but compares If-None-Match
    /// with the file's own ETag, so its own tag never matches and a conditional GET gets a 200
    /// (Apache bug 45023, still so in 2.4.71). The usual cure, mod_headers taking the suffix off
    /// If-None-Match, is applied everywhere but under /shipped/, where the bug shows.
    static func apacheConfig(directory: String, port: Int) -> String {
        let modules = "/usr/lib/apache2/modules"
        // Root's children switch to a user of their own; another user's Apache stays as it is.
        let user = getuid() == 0 ? "User www-data\nGroup www-data" : ""
        return """
            ServerRoot \(directory)
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            PidFile \(directory)/apache2.pid
            DefaultRuntimeDir \(directory)
            ErrorLog \(directory)/error.log
            LogLevel warn
            LoadModule mpm_prefork_module \(modules)/mod_mpm_prefork.so
            LoadModule mime_module \(modules)/mod_mime.so
            LoadModule filter_module \(modules)/mod_filter.so
            LoadModule deflate_module \(modules)/mod_deflate.so
            LoadModule headers_module \(modules)/mod_headers.so
            LoadModule authz_core_module \(modules)/mod_authz_core.so
            \(user)
            StartServers 1
            MinSpareServers 1
            MaxSpareServers 4
            MaxRequestWorkers 8
            DocumentRoot \(directory)/www
            TypesConfig /dev/null
            AddType text/plain .txt
            AddType application/octet-stream .bin
            AddOutputFilterByType DEFLATE text/plain
            <If "%{REQUEST_URI} !~ m#^/shipped/#">
                RequestHeader edit "If-None-Match" "^\\"(.*)-gzip\\"$" "\\"$1\\""
            </If>

            """
    }
}
