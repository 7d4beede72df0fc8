// Debian's lighttpd (1.4.69) for the ForeignServers suites (ForeignServers.swift): mod_deflate
// (Debian's lighttpd-mod-deflate) on text/*, with every coding this build has (`lighttpd -V`:
// zlib, brotli and zstd).

import Foundation

extension TestServers {
    /// lighttpd in the foreground (`-D`) on 127.0.0.1:<free port>.
    static func startLighttpd() throws -> ForeignServer {
        try launchForeign(.lighttpd, binary: "/usr/sbin/lighttpd", errorLog: "error.log") { directory, port in
            let config = """
                server.document-root = "\(directory)/www"
                server.bind = "127.0.0.1"
                server.port = \(port)
                server.pid-file = "\(directory)/lighttpd.pid"
                server.errorlog = "\(directory)/error.log"
                server.modules = ("mod_deflate")
                mimetype.assign = (".txt" => "text/plain", ".bin" => "application/octet-stream")
                deflate.mimetypes = ("text/")
                deflate.allowed-encodings = ("zstd", "br", "gzip", "deflate")

                """
            try config.write(toFile: directory + "/lighttpd.conf", atomically: false, encoding: .utf8)
            return ["/usr/sbin/lighttpd", "-D", "-f", directory + "/lighttpd.conf"]
        }
    }
}
