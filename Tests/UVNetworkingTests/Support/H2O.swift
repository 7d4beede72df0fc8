// Debian's h2o (2.2) for the ForeignServers suites (ForeignServers.swift): its file handler with
// `compress: ON`, which offers gzip and br.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension TestServers {
    /// h2o in the foreground (one process) on 127.0.0.1:<free port>.
    static func startH2O() throws -> ForeignServer {
        try launchForeign(.h2o, binary: "/usr/bin/h2o", errorLog: "error.log") { directory, port in
            // As root h2o switches to `nobody` unless told otherwise, and then cannot write its
            // pid file here: it stays the user it was started as.
            let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
            let config = """
                user: \(user)
                pid-file: \(directory)/h2o.pid
                error-log: \(directory)/error.log
                access-log: \(directory)/access.log
                listen:
                  host: 127.0.0.1
                  port: \(port)
                hosts:
                  default:
                    paths:
                      /:
                        file.dir: \(directory)/www
                        compress: ON

                """
            try config.write(toFile: directory + "/h2o.conf", atomically: false, encoding: .utf8)
            return ["/usr/bin/h2o", "-c", directory + "/h2o.conf"]
        }
    }
}
