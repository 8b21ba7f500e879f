// The metadata that cloudnative-pg/postgres-extensions-containers asks of an
// extension (its <extension>/metadata.hcl), for the image `make image-oci` builds
// from the Debian package (docs/image-volume.md). The package is not in
// apt.postgresql.org, from which that repository's Dockerfiles install theirs:
// until it is, the image is built here. versions: the package's version and the
// extension's default_version (snowflake.control) for each Debian release and
// PostgreSQL major CloudNativePG publishes operand images of
// (ghcr.io/cloudnative-pg/postgresql:<major>-minimal-<release>).
metadata = {
  name                     = "snowflake"
  sql_name                 = "snowflake"
  image_name               = "snowflake"
  licenses                 = ["PostgreSQL"]
  shared_preload_libraries = ["snowflake"]
  postgresql_parameters    = {}
  extension_control_path   = []
  dynamic_library_path     = []
  ld_library_path          = []
  bin_path                 = []
  env                      = {}
  auto_update_os_libs      = false
  required_extensions      = []
  create_extension         = true

  versions = {
    bookworm = {
      "18" = {
        package = "1.2"
        sql     = "1.2"
      }
    }
    trixie = {
      "18" = {
        package = "1.2"
        sql     = "1.2"
      }
    }
  }
}
