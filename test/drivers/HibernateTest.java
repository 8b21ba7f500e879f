// JPA through Hibernate 3.6 (Debian libhibernate3-java) against a server with
// snowflake preloaded and the table orders (id bigint, sid snowflake, both
// DEFAULT snowflake_nextval(): made by test/t/100_drivers.pl, which runs this
// with the source launcher; connection from PGHOST (127.0.0.1), PGPORT,
// PGDATABASE). Prints one "ok - ..." or "not ok - ..." line a check; exits 1
// if any failed.
import java.util.List;
import javax.persistence.*;
import org.hibernate.annotations.Generated;
import org.hibernate.annotations.GenerationTime;
import org.hibernate.ejb.Ejb3Configuration;

public class HibernateTest {
    static int failed = 0;

    static void check(boolean condition, String description) {
        System.out.println((condition ? "ok" : "not ok") + " - hibernate: " + description);
        if (!condition) failed++;
    }

    // docs/drivers.md: both keys are Longs the database fills in; the
    // snowflake column says what it is, for hbm2ddl
    @Entity
    @Table(name = "orders")
    public static class Order {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        public Long id;

        @Generated(GenerationTime.INSERT)
        @Column(columnDefinition = "snowflake", insertable = false, updatable = false)
        public Long sid;

        public String note;
    }

    // the same without columnDefinition
    @Entity
    @Table(name = "orders")
    public static class PlainOrder {
        @Id
        public Long id;
        public Long sid;
        public String note;
    }

    static EntityManagerFactory factory(Class<?> entity) {
        Ejb3Configuration config = new Ejb3Configuration();
        config.setProperty("hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect");
        config.setProperty("hibernate.connection.driver_class", "org.postgresql.Driver");
        config.setProperty("hibernate.connection.url", "jdbc:postgresql://" + System.getenv("PGHOST") + ":"
            + System.getenv("PGPORT") + "/" + System.getenv("PGDATABASE") + "?user=" + System.getProperty("user.name"));
        config.setProperty("hibernate.jdbc.use_get_generated_keys", "true"); // INSERT ... RETURNING
        config.setProperty("hibernate.hbm2ddl.auto", "validate");
        config.addAnnotatedClass(entity);
        return config.buildEntityManagerFactory();
    }

    public static void main(String[] args) {
        // the source launcher's class loader, where Hibernate looks up entities
        Thread.currentThread().setContextClassLoader(HibernateTest.class.getClassLoader());
        try {
            String error = "";
            try {
                factory(PlainOrder.class).close();
            } catch (PersistenceException e) {
                for (Throwable t = e; t != null; t = t.getCause()) error = t.getMessage();
            }
            check(error.contains("Wrong column type") && error.contains("snowflake"),
                  "before: hbm2ddl validate refuses a Long on a snowflake column: " + error);

            EntityManagerFactory factory = factory(Order.class);
            EntityManager em = factory.createEntityManager();
            em.getTransaction().begin();
            Order order = new Order();
            order.note = "jpa";
            em.persist(order);
            em.getTransaction().commit();
            Object[] text = (Object[]) em.createNativeQuery("SELECT CAST(id AS text), CAST(sid AS text) FROM orders WHERE id = ?1")
                .setParameter(1, order.id).getSingleResult();
            check(order.id != null && order.sid != null && order.id.toString().equals(text[0]) && order.sid.toString().equals(text[1]),
                  "persist: both database defaults come back as Longs, exact (" + order.id + ", " + order.sid + ")");
            check(order.id > (1L << 53) && order.sid > (1L << 53), "the ids are above 2^53");

            em.clear();
            Order found = em.createQuery("SELECT o FROM HibernateTest$Order o WHERE o.sid = :sid", Order.class)
                .setParameter("sid", order.sid).getSingleResult();
            check(found.id.equals(order.id) && found.sid.equals(order.sid), "JPQL lookup by sid as a Long parameter");
            check(em.find(Order.class, order.id).sid.equals(order.sid), "find by id");
            for (String[] c : new String[][]{{"id", "orders_pkey"}, {"sid", "orders_sid_key"}}) {
                @SuppressWarnings("unchecked")
                List<Object> plan = em.createNativeQuery("EXPLAIN SELECT note FROM orders WHERE " + c[0] + " = ?1")
                    .setParameter(1, order.sid).getResultList();
                check(plan.toString().contains("Index Scan using " + c[1]), "lookup by " + c[0] + " as a Long parameter uses " + c[1]);
            }
            em.getTransaction().begin();
            em.createNativeQuery("INSERT INTO orders (id, sid, note) VALUES (9007199254740993, 9223372036854775807, 'odd')").executeUpdate();
            em.getTransaction().commit();
            Order odd = em.find(Order.class, (1L << 53) + 1);
            check(odd != null && odd.sid == Long.MAX_VALUE, "2^53+1 and 2^63-1 read back exact");
            em.close();
            factory.close();
        } catch (RuntimeException e) {
            check(false, e.toString());
        }
        System.exit(failed > 0 ? 1 : 0);
    }
}
