#include "db/conninfo.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seatwatch::db {
namespace {

// The display is rebuilt from libpq's parse: key=value, where first, then who.
TEST(MaskDsnTest, HidesPasswordInKeyValueForm) {
  EXPECT_EQ(MaskDsn("host=db user=mon password=hunter2 dbname=booking"),
            "host=db dbname=booking user=mon password=****");
  EXPECT_EQ(MaskDsn("password='se cret' host=db"), "host=db password=****");
  EXPECT_EQ(MaskDsn("host=db password = hunter2"), "host=db password=****");
  EXPECT_EQ(MaskDsn("host=db application_name='a b'"), "host=db application_name='a b'");
}

TEST(MaskDsnTest, HidesPasswordInUriForms) {
  EXPECT_EQ(MaskDsn("postgresql://mon:hunter2@db:5432/booking"),
            "host=db port=5432 dbname=booking user=mon password=****");
  EXPECT_EQ(MaskDsn("postgres://db/booking?user=mon&password=hunter2&sslmode=require"),
            "host=db dbname=booking user=mon password=**** sslmode=require");
  EXPECT_EQ(MaskDsn("postgresql://mon:Top/Secret@db/booking"),
            "postgresql://mon:****@db/booking (the credentials hold an unencoded '/' or '@' that "
            "libpq misreads: percent-encode it)");
}

TEST(MaskDsnTest, LeavesDsnWithoutPasswordAlone) {
  EXPECT_EQ(MaskDsn("postgresql:///booking"), "dbname=booking");
  EXPECT_EQ(MaskDsn("host=/tmp dbname=booking"), "host=/tmp dbname=booking");
  EXPECT_EQ(MaskDsn(""), "(libpq defaults)");
}

TEST(MaskDsnTest, UnparsableDsnShowsNoText) {
  EXPECT_EQ(MaskDsn("host=db PASSWORD=hunter2"), "<unparsable DSN>");
  EXPECT_EQ(MaskDsn("host='unterminated"), "<unparsable DSN>");
}

TEST(MaskDsnTest, SecretOptionNames) {
  for (const char* key : {"password", "sslpassword", "PASSWORD", "oauth_client_secret", "x_token",
                          "passphrase"}) {
    EXPECT_TRUE(IsSecretOption(key)) << key;
  }
  for (const char* key : {"host", "user", "passfile", "sslkey", "sslcert", "dbname"}) {
    EXPECT_FALSE(IsSecretOption(key)) << key;
  }
}

// libpq's errors quote what they refuse; each is scrubbed given the DSN.
TEST(ScrubDsnSecretsTest, RemovesEverySecretFromLibpqErrors) {
  struct ScrubCase {
    std::string dsn;
    std::string message;
    std::string scrubbed;
  };
  const std::vector<ScrubCase> cases = {
      {"postgresql://mon:TopSecret/zzz_more@db/booking",
       "invalid integer value \"TopSecret\" for connection option \"port\"",
       "invalid integer value \"****\" for connection option \"port\""},
      {"postgresql://mon:TopSecret/zzz_more@db/booking",
       "database \"zzz_more@db/booking\" does not exist", "database \"****@db/booking\" does not exist"},
      {"postgresql://mon:TopSecret@zzz_more@db/booking",
       "could not translate host name \"zzz_more@db\" to address",
       "could not translate host name \"****@db\" to address"},
      {"postgresql://mon:Top%2FSecret@db/booking", "x Top/Secret Top%2FSecret y", "x **** **** y"},
      {"postgresql://db/booking?%70assword=TopSecret_zzz&oops",
       "missing key/value separator \"=\" in URI query parameter: \"oops\" in "
       "postgresql://db/booking?%70assword=TopSecret_zzz&oops",
       "missing key/value separator \"=\" in URI query parameter: \"oops\" in "
       "postgresql://db/booking?%70assword=****&oops"},
      {"host=db PASSWORD='Top Secret\\'s'", "PASSWORD='Top Secret\\'s' / Top Secret's",
       "PASSWORD='****' / ****"},
      {"host=db password=hunter2", "no secret here", "no secret here"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ScrubDsnSecrets(c.message, c.dsn), c.scrubbed) << c.dsn;
  }
}

TEST(ScrubDsnSecretsTest, HugeMessagesAndSecretsStayLinear) {
  std::string secret = std::string(100 * 1024, 'x') + "y";
  std::string message(200 * 1024, 'x');
  message += secret;
  std::string scrubbed = ScrubDsnSecrets(message, "host=db password='" + secret + "'");
  EXPECT_EQ(scrubbed, std::string(200 * 1024, 'x') + "****");
}

// Each way a secret reached logs, --once or --check-config. The secret must
// be absent and the host and database still shown.
struct MaskCase {
  const char* dsn;
  const char* secret;
  std::vector<const char*> shown;
};

TEST(MaskDsnTest, HidesEverySecretLibpqWouldUse) {
  const std::vector<MaskCase> cases = {
      // libpq decodes percent-encoded URI parameter names.
      {"postgresql://db/booking?%70assword=TopSecret_zzz", "TopSecret_zzz", {"db", "booking"}},
      {"postgresql://db/booking?pass%77ord=TopSecret_zzz&sslmode=require", "TopSecret_zzz",
       {"db", "booking", "require"}},
      {"postgresql://db/booking?sslpassword=TopSecret_zzz", "TopSecret_zzz", {"db", "booking"}},
      {"host=db dbname=booking sslpassword=TopSecret_zzz", "TopSecret_zzz", {"db", "booking"}},
      {"host=db dbname=booking sslpassword = 'Top Secret_zzz'", "Secret_zzz", {"db", "booking"}},
      // Percent-encoded password in the URI's user part.
      {"postgresql://mon:Top%53ecret_zzz@db/booking", "Secret_zzz", {"db", "booking", "mon"}},
      // An unencoded '/' in the password: libpq reads "mon:TopSecret" as host
      // and port and the rest as the database name.
      {"postgresql://mon:TopSecret/zzz_more@db/booking", "TopSecret", {"db", "booking"}},
      {"postgresql://mon:TopSecret/zzz_more@db/booking", "zzz_more", {"db", "booking"}},
      // An unencoded '@' in the password: libpq takes the rest as the host.
      {"postgresql://mon:TopSecret@zzz_more@db/booking", "zzz_more", {"db", "booking"}},
      // Keys libpq does not know make the DSN unparsable: no DSN text at all.
      {"host=db dbname=booking PASSWORD=TopSecret_zzz", "TopSecret_zzz", {}},
      {"host=db dbname=booking password=TopSecret_zzz bogus", "TopSecret_zzz", {}},
      {"postgresql://mon:TopSecret_zzz@[::1/booking", "TopSecret_zzz", {}},
  };
  for (const auto& c : cases) {
    std::string masked = MaskDsn(c.dsn);
    EXPECT_EQ(masked.find(c.secret), std::string::npos) << c.dsn << " -> " << masked;
    for (const char* part : c.shown) {
      EXPECT_NE(masked.find(part), std::string::npos) << c.dsn << " -> " << masked;
    }
  }
}

TEST(MaskDsnTest, HugeDsnDoesNotCrash) {
  std::string secret(100 * 1024, 'x');
  std::string masked = MaskDsn("host=db dbname=booking password='" + secret + "'");
  EXPECT_EQ(masked.find("xxxx"), std::string::npos) << masked.substr(0, 200);
  EXPECT_NE(masked.find("booking"), std::string::npos) << masked.substr(0, 200);
  masked = MaskDsn("postgresql://mon:" + secret + "@db/booking?application_name=" + secret);
  EXPECT_NE(masked.find("booking"), std::string::npos) << masked.substr(0, 200);
  masked = MaskDsn("host=db " + std::string(100 * 1024, '\''));
  EXPECT_FALSE(masked.empty());
}

TEST(BuildConninfoTest, ParseErrorsNeverQuoteTheSecret) {
  for (const char* dsn : {"host=db PASSWORD=TopSecret_zzz", "host=db password=TopSecret_zzz bogus",
                          "password = TopSecret_zzz 'x", "postgresql://mon:TopSecret_zzz@[::1/booking",
                          "postgresql://mon:TopSecret_zzz@db/booking?x%zz=1",
                          "postgresql://db/booking?%70assword=TopSecret_zzz&oops"}) {
    try {
      BuildConninfo(dsn, SessionSettings());
      ADD_FAILURE() << "expected std::invalid_argument for " << dsn;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find("TopSecret_zzz"), std::string::npos) << e.what();
    }
  }
}

SessionSettings Settings() {
  SessionSettings settings;
  settings.application_name = "seatwatch";
  settings.connect_timeout = std::chrono::milliseconds(5000);
  settings.statement_timeout = std::chrono::milliseconds(5000);
  settings.lock_timeout = std::chrono::milliseconds(100);
  return settings;
}

TEST(BuildConninfoTest, BakesTimeoutsAndNameIntoOptions) {
  std::string conninfo = BuildConninfo("postgresql://mon@db:5433/booking", Settings());
  EXPECT_NE(conninfo.find("host='db'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("port='5433'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("dbname='booking'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("application_name='seatwatch'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("connect_timeout=5"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("-c statement_timeout=5000 -c lock_timeout=100 -c jit=off -c extra_float_digits=1 -c default_transaction_read_only=on"),
            std::string::npos)
      << conninfo;
}

TEST(BuildConninfoTest, KeepsUserOptionsAndQuotes) {
  std::string conninfo =
      BuildConninfo("host=db password='it\\'s' options='-c work_mem=4MB'", Settings());
  EXPECT_NE(conninfo.find("options='-c work_mem=4MB -c statement_timeout=5000"), std::string::npos)
      << conninfo;
  EXPECT_NE(conninfo.find("password='it\\'s'"), std::string::npos) << conninfo;
}

TEST(BuildConninfoTest, WritableSessionOmitsReadOnly) {
  SessionSettings settings = Settings();
  settings.read_only = false;
  EXPECT_EQ(BuildConninfo("dbname=x", settings).find("default_transaction_read_only"),
            std::string::npos);
}

// libpq would refuse every server for a read-only session asking for
// read-write (the session's own default_transaction_read_only makes it
// read-only): the role is asked for instead.
TEST(BuildConninfoTest, ReadOnlySessionAsksForTheServersRole) {
  const std::string dsn = "host=a,b port=5432,5433 dbname=booking target_session_attrs=";
  EXPECT_NE(BuildConninfo(dsn + "read-write", Settings()).find("target_session_attrs='primary'"),
            std::string::npos);
  EXPECT_NE(BuildConninfo(dsn + "read-only", Settings()).find("target_session_attrs='standby'"),
            std::string::npos);
  for (const char* kept : {"any", "primary", "standby", "prefer-standby"}) {
    std::string conninfo = BuildConninfo(dsn + kept, Settings());
    EXPECT_NE(conninfo.find(std::string("target_session_attrs='") + kept + "'"), std::string::npos)
        << conninfo;
  }
  std::string hosts = BuildConninfo(dsn + "any", Settings());
  EXPECT_NE(hosts.find("host='a,b'"), std::string::npos) << hosts;
  EXPECT_NE(hosts.find("port='5432,5433'"), std::string::npos) << hosts;
}

TEST(BuildConninfoTest, WritableSessionKeepsReadWrite) {
  SessionSettings settings = Settings();
  settings.read_only = false;
  std::string conninfo = BuildConninfo("host=a,b target_session_attrs=read-write", settings);
  EXPECT_NE(conninfo.find("target_session_attrs='read-write'"), std::string::npos) << conninfo;
}

TEST(BuildConninfoTest, UnparsableDsnThrowsWithoutPassword) {
  try {
    BuildConninfo("host=db password=hunter2 bogus", Settings());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seatwatch::db
