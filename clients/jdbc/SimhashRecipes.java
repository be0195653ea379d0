/*
 * SimhashRecipes.java: the JDBC recipes for the simhash extension, which has
 * no adapter for JDBC (its types get their OIDs at CREATE EXTENSION time):
 * ask for standard types in the SQL, and pass fingerprints as text with a
 * cast.  Also the test of those recipes (test/clients.sh jdbc): exits 1 on
 * any mismatch.
 *
 *   java -cp /usr/share/java/postgresql.jar clients/jdbc/SimhashRecipes.java \
 *        jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres
 * (Debian: apt-get install libpostgresql-jdbc-java default-jdk-headless)
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class SimhashRecipes {
	static int failures = 0;

	static void check(String what, Object got, Object want) {
		boolean ok = want.equals(got);
		System.out.println((ok ? "ok     " : "FAILED ") + what + ": " + got + (ok ? "" : " (want " + want + ")"));
		if (!ok)
			failures++;
	}

	public static void main(String[] args) throws Exception {
		try (Connection conn = DriverManager.getConnection(args[0])) {
			try (Statement st = conn.createStatement()) {
				st.execute("CREATE EXTENSION IF NOT EXISTS simhash");
				st.execute("CREATE TEMP TABLE docs (id int PRIMARY KEY, h simhash64)");
				st.execute("INSERT INTO docs VALUES (1, '0123456789abcdef'), (2, '0123456789abcdee'), "
						+ "(3, 'ffffffffffffffff'), (4, '8000000000000000')");
			}
			// a fingerprint as a parameter: its 16-hex-digit text with a cast
			String sql = "SELECT id, hamming_distance(h, ?::simhash64) AS d1, (h <~> ?::simhash64)::int AS d2, "
					+ "h <~> ?::simhash64 AS raw, h::text AS hex, h::bigint AS bits "
					+ "FROM docs WHERE h <~> ?::simhash64 <= 64 ORDER BY id";
			try (PreparedStatement ps = conn.prepareStatement(sql)) {
				for (int i = 1; i <= 4; i++)
					ps.setString(i, "0123456789abcdef");
				StringBuilder d1 = new StringBuilder(), d2 = new StringBuilder(), raw = new StringBuilder();
				StringBuilder hex = new StringBuilder(), bits = new StringBuilder();
				try (ResultSet rs = ps.executeQuery()) {
					while (rs.next()) {
						d1.append(rs.getInt("d1")).append(' ');
						d2.append(rs.getInt("d2")).append(' ');
						// the raw distance: an unknown type to JDBC, read as text and parsed
						raw.append(rs.getString("raw")).append(':').append(rs.getInt("raw")).append(' ');
						hex.append(rs.getString("hex")).append(' ');
						// the same 64 bits as a signed long; printed unsigned as the extension does
						bits.append(String.format("%16s", Long.toUnsignedString(rs.getLong("bits"), 16))
								.replace(' ', '0')).append(' ');
					}
				}
				check("hamming_distance() with getInt", d1.toString().trim(), "0 1 32 33");
				check("(h <~> q)::int with getInt", d2.toString().trim(), "0 1 32 33");
				check("h <~> q with getString and getInt", raw.toString().trim(), "0:0 1:1 32:32 33:33");
				check("h::text", hex.toString().trim(),
						"0123456789abcdef 0123456789abcdee ffffffffffffffff 8000000000000000");
				check("h::bigint as unsigned hex", bits.toString().trim(),
						"0123456789abcdef 0123456789abcdee ffffffffffffffff 8000000000000000");
			}
			// a radius query with the distance and the radius as parameters
			try (PreparedStatement ps = conn.prepareStatement(
					"SELECT count(*) FROM docs WHERE h <~> ?::simhash64 <= ?")) {
				ps.setString(1, "0123456789abcdef");
				ps.setInt(2, 3);
				try (ResultSet rs = ps.executeQuery()) {
					rs.next();
					check("rows within 3 bits", rs.getInt(1), 2);
				}
			}
		}
		System.exit(failures == 0 ? 0 : 1);
	}
}
